/**
 * One operators' console left open, without the browser: the requests
 * `plugins/console/page/console.js` makes while signed in with an API key and visible, at its
 * pace (its timings read off its source, bench/lib/console-page.ts): the long poll of
 * `/console/calls` (the next read once an answer arrives, after the page's pause when it brought
 * calls: CALLS_PACE_MS, or `think`), the conditional reads (`If-None-Match`, the last ETag) every
 * 5 s (`/console/series`, `/console/upstreams`, `/approvals/ui/feed`), 15 s (`/console/tools`),
 * and `/console/audit` every 10 s, each timer set when its read ends, as the page's `every` does.
 *
 * Over keep-alive connections as a browser's (at most 6, the long poll holding one), with a
 * client as lean as bench/lib/raw-http.ts: on a 2-core machine this process shares the load
 * generator's core, and fetch cost it about 1 ms per long-poll answer (15 KiB of JSON), which
 * held back the load generator instead of measuring the gateway. So an answer of the calls is
 * not parsed: its `next` and its number of calls are read off the text. Nothing is drawn either,
 * so it reads at least as often as a page does: an upper bound of what a page asks (`think` 0:
 * the page as it was before its long poll was paced).
 *
 * A child process of bench/console.ts, driven over IPC:
 *  - `{ type: 'open', port, key, think }`: sign in and start polling; answers `{ type: 'opened' }` once
 *    the sign-in read and the first read of the calls (`after=0&waitMs=0`) are answered;
 *  - `{ type: 'close', from, to }`: stop every loop and close every connection (what is in
 *    flight with it); answers `{ type: 'closed', report }`, the reads answered between `from`
 *    and `to` (epoch ms).
 */
import { connect, type Socket } from 'node:net'
import { pagePace, tally, type Answered } from './console-page.js'

export interface ViewerOpen {
  readonly type: 'open'
  readonly port: number
  readonly key: string
  /** Milliseconds to wait after an answer that brought calls before the next read (the page's CALLS_PACE_MS, or `--think`). */
  readonly think: number
}
export interface ViewerClose { readonly type: 'close', readonly from: number, readonly to: number }

/** What one kind of read did within the window. */
export interface ReadCount {
  readonly requests: number
  /** 200 answers. */
  readonly ok: number
  /** 304 answers (a conditional read of something unchanged). */
  readonly notModified: number
  /** Any other status, or a request that failed. */
  readonly failed: number
  /** Response body bytes. */
  readonly bytes: number
}

export interface ViewerReport {
  readonly seconds: number
  readonly reads: Readonly<Record<string, ReadCount>>
  /** Call summaries the long poll brought. */
  readonly callsSeen: number
  /** The first failure's text, when any read failed. */
  readonly firstFailure?: string
}

/** The page's timings, read off its source (the multiples of POLL_MS are its `every` calls'). */
const { pollMs: POLL_MS, callWaitMs: CALL_WAIT_MS } = pagePace()
/** A browser's connections per origin. */
const MAX_CONNECTIONS = 6

interface Answer { readonly status: number, readonly etag: string | undefined, readonly body: Buffer }

/** One keep-alive HTTP/1.1 connection, one GET at a time; the answer read by its content-length. */
class Connection {
  #buffer: Buffer = Buffer.alloc(0)
  #pending: { resolve: (answer: Answer) => void, reject: (error: Error) => void } | undefined
  #closed = false

  private constructor (readonly socket: Socket) {
    socket.setNoDelay(true)
    socket.on('data', chunk => { this.#read(chunk) })
    socket.on('error', error => { this.#fail(error) })
    socket.on('close', () => { this.#closed = true; this.#fail(new Error('the connection closed')) })
  }

  static async open (port: number): Promise<Connection> {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve).once('error', reject) })
    return new Connection(socket)
  }

  get usable (): boolean { return !this.#closed }

  async get (path: string, headers: Record<string, string>): Promise<Answer> {
    const head = [`GET ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
    return await new Promise((resolve, reject) => {
      this.#pending = { resolve, reject }
      this.socket.write(`${head.join('\r\n')}\r\n\r\n`)
    })
  }

  #read (chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
    const headEnd = this.#buffer.indexOf('\r\n\r\n')
    if (headEnd === -1) return
    const head = this.#buffer.toString('latin1', 0, headEnd)
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    if (length === null && status !== 304) {
      this.#fail(new Error(`an answer (${status}) without content-length`))
      return
    }
    const total = headEnd + 4 + (length === null ? 0 : Number(length[1]))
    if (this.#buffer.length < total) return
    const body = this.#buffer.subarray(headEnd + 4, total)
    this.#buffer = this.#buffer.subarray(total)
    const pending = this.#pending
    this.#pending = undefined
    pending?.resolve({ status, etag: /\r\netag: *([^\r]+)/i.exec(head)?.[1], body })
  }

  #fail (error: Error): void {
    const pending = this.#pending
    this.#pending = undefined
    pending?.reject(error)
  }
}


let answered: Answered[] = []
let firstFailure: string | undefined
let generation = 0
let timers: NodeJS.Timeout[] = []
let idle: Connection[] = []
const busy = new Set<Connection>()

/** A keep-alive connection that is free, or a new one. */
async function connection (port: number): Promise<Connection> {
  idle = idle.filter(c => c.usable)
  const free = idle.pop() ?? (busy.size + idle.length < MAX_CONNECTIONS ? await Connection.open(port) : undefined)
  if (free === undefined) throw new Error(`more than ${MAX_CONNECTIONS} reads at once`)
  busy.add(free)
  return free
}

/** `"next":N}` at the end of an answer of the calls, and the number of calls in it. */
function callsAnswer (body: Buffer): { next: number, calls: number } {
  const at = body.lastIndexOf('"next":')
  if (at === -1) throw new Error(`an answer of the calls without next: ${body.toString('utf8', 0, 200)}`)
  let calls = 0
  for (let from = body.indexOf('"seq":'); from !== -1; from = body.indexOf('"seq":', from + 6)) calls++
  return { next: Number.parseInt(body.toString('latin1', at + 7, at + 30), 10), calls }
}

function open ({ port, key, think }: ViewerOpen): Promise<void> {
  const mine = ++generation
  const etags = new Map<string, string>()

  /** One read as the page's `read` makes it: the credential, `If-None-Match` when it holds an ETag. */
  const read = async (label: string, path: string, conditional: boolean): Promise<Answer> => {
    const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': key }
    const etag = conditional ? etags.get(path) : undefined
    if (etag !== undefined) headers['if-none-match'] = etag
    let status = 0
    let bytes = 0
    let calls = 0
    let conn: Connection | undefined
    try {
      conn = await connection(port)
      const answer = await conn.get(path, headers)
      status = answer.status
      bytes = answer.body.length
      if (status !== 200 && status !== 304) throw new Error(`${label}: ${status} ${answer.body.toString('utf8', 0, 200)}`)
      if (status === 200 && conditional && answer.etag !== undefined) etags.set(path, answer.etag)
      if (label === 'calls') calls = callsAnswer(answer.body).calls
      if (mine === generation) idle.push(conn)
      else conn.socket.destroy()
      return answer
    } catch (error) {
      conn?.socket.destroy()
      if (mine === generation) firstFailure ??= (error as Error).message
      throw error
    } finally {
      if (conn !== undefined) busy.delete(conn)
      if (mine === generation) answered.push({ at: Date.now(), read: label, status: status === 200 || status === 304 ? status : -1, bytes, calls })
    }
  }

  /** The page's `every`: now, then `ms` after each run ends, while this sign-in lasts. */
  const every = (label: string, path: string, conditional: boolean, ms: number): void => {
    const run = async (): Promise<void> => {
      if (mine !== generation) return
      try { await read(label, path, conditional) } catch { /* the page shows a notice and tries again */ }
      if (mine === generation) timers.push(setTimeout(() => { void run() }, ms))
    }
    void run()
  }

  return (async () => {
    // Sign-in: any data route says whether the credential opens the console.
    await read('sign-in', '/console/upstreams', false)
    // The page's followCalls: the first read waits for nothing; then each waits for the next call.
    let after = callsAnswer((await read('calls', '/console/calls?after=0&max=100&waitMs=0', false)).body).next
    void (async () => {
      while (mine === generation) {
        const wait = after === 0 ? 0 : CALL_WAIT_MS
        try {
          const answer = callsAnswer((await read('calls', `/console/calls?after=${after}&max=100&waitMs=${wait}`, false)).body)
          after = answer.next
          if (think > 0 && answer.calls > 0) await new Promise(resolve => setTimeout(resolve, think))
        } catch {
          if (mine !== generation) return
          await new Promise(resolve => setTimeout(resolve, POLL_MS))
        }
      }
    })()
    every('series', '/console/series', true, POLL_MS)
    every('upstreams', '/console/upstreams', true, POLL_MS)
    every('approvals feed', '/approvals/ui/feed', true, POLL_MS)
    every('tools', '/console/tools', true, 3 * POLL_MS)
    every('audit', '/console/audit?max=20', false, 2 * POLL_MS)
  })()
}

function close (from: number, to: number): ViewerReport {
  generation++
  for (const timer of timers) clearTimeout(timer)
  timers = []
  for (const conn of [...idle, ...busy]) conn.socket.destroy()
  idle = []
  busy.clear()
  const { reads, callsSeen } = tally(answered, from, to)
  const report: ViewerReport = { seconds: (to - from) / 1000, reads, callsSeen, ...(firstFailure === undefined ? {} : { firstFailure }) }
  answered = []
  firstFailure = undefined
  return report
}

process.on('message', (message: ViewerOpen | ViewerClose) => {
  if (message.type === 'open') {
    open(message).then(
      () => { process.send!({ type: 'opened' }) },
      (error: unknown) => { process.send!({ type: 'failed', error: (error as Error).message }) })
  } else {
    process.send!({ type: 'closed', report: close(message.from, message.to) })
  }
})
process.on('disconnect', () => { process.exit(0) })
