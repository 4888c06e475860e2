/**
 * Child processes: servers and load generators, each pinned to its own core where `taskset`
 * exists, all killed by PID when the bench exits, however it exits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { onCore, SERVER_CORE } from './cores.js'

export { LOAD_CORE, PINNED, SERVER_CORE } from './cores.js'

const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) if (child.pid !== undefined) try { process.kill(child.pid, 'SIGKILL') } catch {}
})
process.once('SIGINT', () => { process.exit(130) })
process.once('SIGTERM', () => { process.exit(143) })

/**
 * Run node on `core` (taskset execs node, so the child's PID is node's), with the TypeScript
 * loader production uses (`npm start`), so every target runs its code the same way.
 */
export function spawnNode (core: number, args: readonly string[], options: { env?: Record<string, string>, ipc?: boolean } = {}): ChildProcess {
  const nodeArgs = ['--import', './runtime/register.mjs', ...args]
  const [command, argv] = onCore(core, process.execPath, nodeArgs)
  const child = spawn(command, argv, {
    stdio: ['ignore', options.ipc === true ? 'inherit' : 'pipe', 'inherit', ...(options.ipc === true ? ['ipc' as const] : [])],
    env: { ...process.env, ...options.env },
  })
  live.add(child)
  child.once('exit', () => { live.delete(child) })
  return child
}

export function stop (child: ChildProcess): void {
  live.delete(child)
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try { process.kill(child.pid, 'SIGKILL') } catch { /* it exited meanwhile */ }
}

/** Resident set size of a live process, in MiB, from /proc (undefined where there is none). */
export function rssMiB (pid: number): number | undefined {
  try {
    const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return line === null ? undefined : Number(line[1]) / 1024
  } catch {
    return undefined
  }
}

/** Wait for one IPC message that `accept` recognises; fail if the child exits first. */
export async function nextMessage<T> (child: ChildProcess, accept: (message: unknown) => T | undefined, timeoutMs = 30_000): Promise<T> {
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { done(); reject(new Error(`no answer from PID ${child.pid} within ${timeoutMs} ms`)) }, timeoutMs)
    const onMessage = (message: unknown): void => {
      const value = accept(message)
      if (value !== undefined) { done(); resolve(value) }
    }
    const onExit = (code: number | null): void => { done(); reject(new Error(`PID ${child.pid} exited (code ${code}) before answering`)) }
    const done = (): void => { clearTimeout(timer); child.off('message', onMessage); child.off('exit', onExit) }
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

/** Run a node script to completion on `core` and return what it printed. */
export async function runScript (core: number, args: readonly string[]): Promise<string> {
  const child = spawnNode(core, args)
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  if (code !== 0) throw new Error(`${args.join(' ')} exited with code ${code}`)
  return out
}

/**
 * Start a target (`bench/targets/...`) on the server core and wait for the port it announces;
 * `children` collects it, for the caller to `stop`.
 */
export async function startTarget (file: string, children: ChildProcess[], env: Record<string, string> = {}): Promise<{ url: string, pid: number }> {
  const child = spawnNode(SERVER_CORE, [file], { env, ipc: true })
  children.push(child)
  const port = await nextMessage(child, m => (m as { port?: number } | null)?.port)
  return { url: `http://127.0.0.1:${port}`, pid: child.pid! }
}
