import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { AuditWriter } from '../../src/services/audit/writer.js'
import { verifyAuditText } from '../../src/services/audit/verify.js'

// The compiled command and server, as `npx toolgate` runs them (`npm test` builds first).
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'dist/bin/toolgate.js')
const tmp = (): string => join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.log')
const quiet = { maxBuffered: 10_000, onDrop: () => {}, onError: () => {} }

function verify (...args: string[]): { status: number | null, stdout: string, stderr: string } {
  const result = spawnSync(process.execPath, [bin, 'audit', 'verify', ...args], { cwd: root, encoding: 'utf8', timeout: 20_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

async function writeLines (path: string, count: number): Promise<void> {
  const writer = await AuditWriter.open(path, quiet)
  for (let i = 0; i < count; i++) writer.append({ event: 'call', tool: 'notes_write', n: i })
  await writer.close()
}

describe('toolgate audit verify', { timeout: SLOW.PROCESS_MS }, () => {
  it('exits 0 on an intact file, 1 at the first tampered line, 2 on a usage mistake', async () => {
    const path = tmp()
    await writeLines(path, 5)
    expect(verify(path)).toMatchObject({ status: 0, stdout: expect.stringMatching(/intact, 5 records; head seq 5 hash [0-9a-f]{64}/) })
    const lines = readFileSync(path, 'utf8').split('\n')
    lines[2] = lines[2]!.replace('"n":2', '"n":7')
    writeFileSync(path, lines.join('\n'))
    expect(verify(path)).toMatchObject({ status: 1, stdout: `${path}:3: changed: its text does not match its hash\n` })
    expect(verify().status).toBe(2)
    expect(verify(path, 'extra').status).toBe(2)
    expect(verify(path, '--head', 'nothex').status).toBe(2)
    expect(spawnSync(process.execPath, [bin, 'audit', 'check', path]).status).toBe(2)
    expect(verify(join(path, 'missing')).status).toBe(1)
    expect(spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' }).stdout).toContain('  audit ')
  })
})

describe('a crash mid-write', { timeout: SLOW.PROCESS_MS }, () => {
  it('leaves a torn last line: reported as such, the prefix verifies, and the next start resumes the chain after it', async () => {
    const path = tmp()
    await writeLines(path, 4)
    const size = readFileSync(path).length
    truncateSync(path, size - 20) // the last line cut short, as a crash in the middle of its write leaves it
    expect(verify(path)).toMatchObject({ status: 1, stdout: expect.stringContaining(':4: torn') })
    const text = readFileSync(path, 'utf8')
    expect(verifyAuditText(text.slice(0, text.lastIndexOf('\n') + 1))).toMatchObject({ ok: true, lines: 3 })

    const writer = await AuditWriter.open(path, quiet)
    writer.append({ event: 'call', tool: 'notes_write', n: 'after the crash' })
    await writer.close()
    expect(verify(path)).toMatchObject({ status: 0, stdout: expect.stringContaining('resumed after torn line(s) 4') })
    const last = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!) as Record<string, unknown>
    expect(last).toMatchObject({ seq: 5, n: 'after the crash' })
  })

  it('a gateway killed (SIGKILL) under write load leaves a file whose complete lines verify, and continues it on restart', async () => {
    const path = tmp()
    const killed = await runServer(path, async (address, child) => {
      const load = Array.from({ length: 200 }, (_, i) => fetch(`${address}/tools/notes_write`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: `k${i}`, text: 'x'.repeat(500) }),
      }).catch(() => undefined))
      // Kill it while it writes: once the first lines are on disk (the load is still running).
      for (let waited = 0; waited < 10_000 && (!existsSync(path) || statSync(path).size === 0); waited += 10) await new Promise(resolve => setTimeout(resolve, 10))
      child.kill('SIGKILL')
      await Promise.all(load)
    })
    expect(killed.signal).toBe('SIGKILL')
    const text = readFileSync(path, 'utf8')
    const complete = text.slice(0, text.lastIndexOf('\n') + 1)
    const verdict = verifyAuditText(text)
    // Either every line made it, or only the last one is torn: never a break in the middle.
    if (!verdict.ok) expect(verdict).toMatchObject({ torn: true, line: complete.split('\n').length })
    const prefix = verifyAuditText(complete)
    expect(prefix.ok).toBe(true)
    expect(prefix.ok && prefix.lines).toBeGreaterThan(0)

    const restarted = await runServer(path, async (address, child) => {
      const response = await fetch(`${address}/tools/notes_write`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: 'after', text: 'restart' }) })
      expect(response.status).toBe(200)
      child.kill('SIGTERM')
    })
    expect(restarted.code).toBe(0)
    expect(verify(path)).toMatchObject({ status: 0 })
    expect(readFileSync(path, 'utf8')).toContain('"inputDigest"')
  })
})

interface Exit { code: number | null, signal: NodeJS.Signals | null, stdout: string }

function runServer (auditLog: string, whileUp: (address: string, child: ReturnType<typeof spawn>) => Promise<void>): Promise<Exit> {
  // Without Redis even where the environment names one: nothing here is shared with other runs.
  const child = spawn(process.execPath, [bin, 'serve'], { cwd: root, env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '', AUDIT_LOG: auditLog, TOOLS_DIR: 'tools' } })
  let stdout = ''
  let started = false
  child.stderr.on('data', chunk => { stdout += String(chunk) })
  child.stdout.on('data', chunk => {
    stdout += String(chunk)
    const match = /"address":"(http:\/\/[^"]+)"/.exec(stdout)
    if (match !== null && !started) {
      started = true
      void whileUp(match[1]!, child)
    }
  })
  return new Promise(resolve => child.on('exit', (code, signal) => { resolve({ code, signal, stdout }) }))
}
