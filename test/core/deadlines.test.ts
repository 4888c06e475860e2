import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { cancelDeadline, startDeadline } from '../../src/core/deadlines.js'
import { sleep } from './helpers.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('deadlines', () => {
  it('fire after their time, in the order they were started', async () => {
    const fired: string[] = []
    const started = performance.now()
    startDeadline(30, () => { fired.push('first') })
    // Started with first, due 20 ms before it: a late sleep below (a busy machine) cannot change that.
    startDeadline(10, () => { fired.push('short') })
    await sleep(5)
    startDeadline(30, () => { fired.push('second') })
    await sleep(60)
    expect(fired).toEqual(['short', 'first', 'second'])
    expect(performance.now() - started).toBeGreaterThanOrEqual(30)
  })

  it('a cancelled deadline never fires; the others around it still do', async () => {
    const fired: number[] = []
    const deadlines = [0, 1, 2, 3].map(i => startDeadline(20, () => { fired.push(i) }))
    cancelDeadline(deadlines[0])
    cancelDeadline(deadlines[2])
    cancelDeadline(deadlines[2]) // twice: nothing more happens
    await sleep(50)
    expect(fired).toEqual([1, 3])
  })

  it('a deadline started after the others were cancelled fires on its own time, not theirs', async () => {
    const early = startDeadline(40, () => { throw new Error('cancelled: must not fire') })
    cancelDeadline(early)
    await sleep(20)
    let firedAt = 0
    const started = performance.now()
    startDeadline(40, () => { firedAt = performance.now() })
    await sleep(80)
    expect(firedAt - started).toBeGreaterThanOrEqual(39)
  })

  it('keeps the process alive only while a deadline is pending', () => {
    const script = `
      import { cancelDeadline, startDeadline } from './src/core/deadlines.ts'
      cancelDeadline(startDeadline(60_000, () => {}))
      const started = Date.now()
      process.on('exit', () => { console.log(Date.now() - started < 5_000 ? 'exited at once' : 'held') })
    `
    const out = execFileSync(process.execPath, ['--import', './runtime/register.mjs', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 20_000 })
    expect(out.trim()).toBe('exited at once')
  }, SLOW.PROCESS_MS)
})
