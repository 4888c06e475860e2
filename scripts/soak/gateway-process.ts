import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../lib/free-port.js'

export interface GatewayProcess {
  readonly pid: number
  readonly url: string
  /** The child's resident set size now, from /proc/<pid>/status (bytes). */
  rss (): number
  /** Whether the child exited (and how), while it should be serving. */
  exited (): string | undefined
  /** The last lines it logged (warnings and errors only). */
  logTail (): string
  stop (): Promise<void>
}

/**
 * Start `node dist/bin/toolgate.js serve` on 127.0.0.1 with `config` in a temporary
 * CONFIG_FILE, and an environment of PATH and HOME only: no REDIS_URL (embedded stores), no
 * FETCH_ALLOWED_HOSTS (url_fetch reaches no network), no stray setting overriding the file.
 */
export async function startGateway (root: string, config: Record<string, unknown>): Promise<GatewayProcess> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-soak-'))
  const configFile = join(dir, 'config.json')
  writeFileSync(configFile, JSON.stringify({ ...config, host: '127.0.0.1', port }))
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, CONFIG_FILE: configFile }
  const child = spawn(process.execPath, ['dist/bin/toolgate.js', 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  const keep = (chunk: Buffer): void => { log = (log + String(chunk)).slice(-8_000) }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  let exit: string | undefined
  child.once('exit', (code, signal) => { exit = `exit code ${code}, signal ${signal}` })
  const gateway: GatewayProcess = {
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    rss: () => rssOf(child.pid!),
    exited: () => exit,
    logTail: () => log,
    stop: async () => { await stopChild(child); rmSync(dir, { recursive: true, force: true }) },
  }
  await untilHealthy(gateway)
  return gateway
}

async function untilHealthy (gateway: GatewayProcess): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (gateway.exited() !== undefined) throw new Error(`the gateway did not start (${gateway.exited()}):\n${gateway.logTail()}`)
    try {
      if ((await fetch(`${gateway.url}/healthz`)).ok) return
    } catch { /* not listening yet */ }
    await sleep(100)
  }
  await gateway.stop()
  throw new Error(`the gateway did not answer /healthz within 30 s:\n${gateway.logTail()}`)
}

function rssOf (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)
  if (kb === null) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(kb[1]) * 1024
}

/** SIGTERM by PID (graceful shutdown), SIGKILL if it is still there after 10 s. */
async function stopChild (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  process.kill(child.pid!, 'SIGTERM')
  const timer = setTimeout(() => { if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL') }, 10_000)
  await exited
  clearTimeout(timer)
}

