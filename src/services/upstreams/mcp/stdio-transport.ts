import { spawn, type ChildProcess } from 'node:child_process'
import { serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client'
import type { StdioServerConfig } from '../file.js'
import { MessageReader } from './message-reader.js'

/*
 * A stdio MCP server as a child of the gateway, in a process group of its own so that every
 * process it starts (`npx` starts npm, which starts node) stops with it. The child's
 * environment is what the file gives it plus a minimal base: never the gateway's own secrets.
 * Its stdout must carry MCP messages only: a JSON line that is no JSON-RPC message, or any
 * line larger than the bound, breaks the connection (the calls on it fail at once, and the
 * server is restarted) rather than leaving calls to wait for answers that will never come.
 * A line that is not JSON at all is skipped, as the SDK skips it: servers that print a log
 * line to stdout by mistake keep working.
 */

/** Inherited from the gateway: enough to find programs and a home, nothing that holds a credential. */
const BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ']
const STDERR_LINE_BYTES = 4_096
const STOP_GRACE_MS = 2_000

/** Process groups of children still running, killed if the gateway exits without stopping them. */
const running = new Set<number>()
let exitHookInstalled = false

function killGroup (pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch { /* gone already */ }
}

function installExitHook (): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // The last chance on the way out (an uncaught error, process.exit): `exit` handlers run synchronously.
  process.on('exit', () => { for (const pid of running) killGroup(pid, 'SIGKILL') })
}

function childEnvironment (server: StdioServerConfig, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const base: Record<string, string> = {}
  for (const key of BASE_ENV) {
    const value = env[key]
    if (value !== undefined && !value.startsWith('()')) base[key] = value
  }
  return { ...base, ...server.env }
}

export interface ChildTransportOptions {
  /** The largest message the child may send, in bytes (`MAX_RESPONSE_BYTES`). */
  readonly maxMessageBytes: number
  /** One line of the child's stderr (bounded), for the gateway's log. */
  readonly stderr: (line: string) => void
  /** The child ended (its exit code or signal), before `onclose`. */
  readonly exited: (code: number | null, signal: NodeJS.Signals | null) => void
}

export class ChildTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  readonly #server: StdioServerConfig
  readonly #options: ChildTransportOptions
  readonly #buffer: MessageReader
  #child: ChildProcess | undefined
  #exited: Promise<void> = Promise.resolve()
  #broken = false

  constructor (server: StdioServerConfig, options: ChildTransportOptions) {
    this.#server = server
    this.#options = options
    this.#buffer = new MessageReader(options.maxMessageBytes)
  }

  get pid (): number | undefined {
    return this.#child?.pid
  }

  async start (): Promise<void> {
    if (this.#child !== undefined) throw new Error('already started')
    installExitHook()
    const child = spawn(this.#server.command, [...this.#server.args], {
      env: childEnvironment(this.#server),
      cwd: this.#server.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
    })
    this.#child = child
    this.#exited = new Promise(resolve => {
      child.once('exit', (code, signal) => {
        if (child.pid !== undefined) {
          running.delete(child.pid)
          // Whatever it started and left behind goes with it.
          killGroup(child.pid, 'SIGKILL')
        }
        this.#options.exited(code, signal)
        resolve()
      })
    })
    child.once('close', () => {
      this.#child = undefined
      this.#buffer.clear()
      this.onclose?.()
    })
    child.stdin!.on('error', error => { this.onerror?.(error) })
    child.stdout!.on('data', (chunk: Buffer) => { this.#read(chunk) })
    child.stdout!.on('error', error => { this.onerror?.(error) })
    lines(child.stderr!, this.#options.stderr)
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        if (child.pid !== undefined) running.add(child.pid)
        resolve()
      })
      child.once('error', error => {
        this.#child = undefined
        reject(error)
      })
    })
  }

  #read (chunk: Buffer): void {
    if (this.#broken) return
    try {
      this.#buffer.append(chunk)
      for (let message = this.#buffer.readMessage(); message !== null; message = this.#buffer.readMessage()) this.onmessage?.(message)
    } catch (error) {
      // Too large, or not an MCP message: this stream cannot be trusted for another answer.
      this.#broken = true
      this.onerror?.(new Error(`the server broke the stdio protocol: ${(error as Error).message.split('\n')[0]!.slice(0, 200)}`))
      void this.close()
    }
  }

  async send (message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin
    if (stdin === undefined || stdin === null || stdin.destroyed) throw new Error('the server is not running')
    // Written at once, not corked until the loop's next turn: holding calls back to share one
    // write cost each of them more in waiting (p50) than the server saved in wake-ups. While
    // the pipe is full, the stream queues what follows and sends it together anyway.
    if (!stdin.write(serializeMessage(message))) await new Promise(resolve => stdin.once('drain', resolve))
  }

  /** Close its stdin (the polite stop), then SIGTERM, then SIGKILL its whole group. */
  async close (): Promise<void> {
    const child = this.#child
    if (child === undefined || child.pid === undefined) return
    const pid = child.pid
    const exited = this.#exited
    try {
      child.stdin?.end()
    } catch { /* already closed */ }
    if (!await within(exited, STOP_GRACE_MS)) {
      killGroup(pid, 'SIGTERM')
      if (!await within(exited, STOP_GRACE_MS)) killGroup(pid, 'SIGKILL')
    }
    await exited
  }
}

async function within (promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const done = await Promise.race([promise.then(() => true), new Promise<boolean>(resolve => { timer = setTimeout(() => { resolve(false) }, ms) })])
  clearTimeout(timer)
  return done
}

/** Each line of a stream, at most `STDERR_LINE_BYTES` of it: a child that never writes a newline cannot grow the buffer. */
function lines (stream: NodeJS.ReadableStream, each: (line: string) => void): void {
  let pending = ''
  stream.setEncoding('utf8')
  stream.on('data', (text: string) => {
    pending += text
    let newline = pending.indexOf('\n')
    while (newline !== -1) {
      const line = pending.slice(0, newline).trimEnd()
      if (line !== '') each(line.slice(0, STDERR_LINE_BYTES))
      pending = pending.slice(newline + 1)
      newline = pending.indexOf('\n')
    }
    if (pending.length > STDERR_LINE_BYTES) {
      each(pending.slice(0, STDERR_LINE_BYTES))
      pending = ''
    }
  })
  stream.on('end', () => { if (pending.trim() !== '') each(pending.trim().slice(0, STDERR_LINE_BYTES)) })
}
