import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

interface Run { code: number | null, stdout: string, stderr: string }

/** Start the real server entry; `onListening` runs once it logs its address. */
function startServer (env: Record<string, string>, onListening?: (address: string, kill: (signal: NodeJS.Signals) => void) => void): Promise<Run> {
  // Without Redis even where the environment names one: nothing here is shared with other runs.
  const child = spawn(process.execPath, ['dist/bin/toolgate.js', 'serve'], { cwd: root, env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '', ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', chunk => {
    stdout += String(chunk)
    const match = /"address":"(http:\/\/[^"]+)"/.exec(stdout)
    if (match !== null && onListening !== undefined) {
      const once = onListening
      onListening = undefined
      once(match[1]!, signal => child.kill(signal))
    }
  })
  child.stderr.on('data', chunk => { stderr += String(chunk) })
  return new Promise(resolve => child.on('exit', code => { resolve({ code, stdout, stderr }) }))
}

describe('the server entry', { timeout: SLOW.PROCESS_MS }, () => {
  it('serves the shipped tools and exits 0 on SIGTERM', async () => {
    let health = 0
    const run = await startServer({}, (address, kill) => {
      void fetch(`${address}/healthz`).then(r => { health = r.status }).finally(() => kill('SIGTERM'))
    })
    expect(health).toBe(200)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('"msg":"stopped"')
  })

  it('refuses to start on a non-loopback address without credentials, naming the setting', async () => {
    const run = await startServer({ HOST: '0.0.0.0' })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('invalid setting "HOST"')
  })

  it('a bad setting stops start-up with a message naming it', async () => {
    const run = await startServer({ PORT: 'eighty' })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('invalid setting "port"')
  })

  it('a broken tool module stops start-up naming the file', async () => {
    const run = await startServer({ TOOLS_DIR: 'test/fixtures/broken-tools' })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/broken\.ts: import failed: this module is broken on purpose/)
  })

  it('a bad declaration stops start-up naming the tool, the field and the file', async () => {
    const run = await startServer({ TOOLS_DIR: 'test/fixtures/bad-declaration-tools' })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/tool "bad_timeout" \(.*bad\.ts\): field "timeoutMs"/)
  })

  it('serves a TOOLS_DIR anywhere, without node_modules, whose TypeScript tool imports toolgate and zod', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-anywhere-'))
    writeFileSync(join(dir, 'double.ts'), `import { z } from 'zod'
import { defineTool, ToolError } from 'toolgate'
export default defineTool({
  id: 'double', kind: 'compute', description: 'Double a number.',
  inputSchema: z.object({ n: z.number() }), outputSchema: z.object({ n: z.number() }),
  isReadOnly: true, isConcurrencySafe: true, authorize () {},
  execute: ({ n }: { n: number }) => { if (n < 0) throw new ToolError(422, 'NEGATIVE', 'no negatives'); return { n: n * 2 } },
})
`)
    const answers: Array<[number, unknown]> = []
    try {
      const run = await startServer({ TOOLS_DIR: dir }, (address, kill) => {
        const post = (n: number) => fetch(`${address}/tools/double`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) })
          .then(async r => { answers.push([r.status, await r.json()]) })
        void post(21).then(() => post(-1)).finally(() => kill('SIGTERM'))
      })
      expect(run.code).toBe(0)
      expect(answers).toEqual([[200, { n: 42 }], [422, expect.objectContaining({ code: 'NEGATIVE' })]])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
