import { appendFileSync, readFileSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { FIRST_RECORDS, shareRefusal } from '../../core/idempotency/shares.js'
import { EMPTY_CHAIN, fieldsOf, sha256, type ChainHead } from './chain.js'
import { PendingLines } from './pending-lines.js'
import { verifyAuditText } from './verify.js'

/** Where audit lines go: a file opened for appending, or the process's stdout. */
interface Sink {
  write (bytes: Uint8Array): Promise<void>
  /** Ask the kernel to put what was written on the disk (fdatasync); stdout has nothing to sync. */
  sync (): Promise<void>
  close (): Promise<void>
}

/** Lines that, queued, are written at once rather than at the end of the interval. */
const EAGER_LINES = 1_024
/** Principals a `dropped` record names one by one; the rest are summed under `*`. */
const NAMED_DROPPERS = 64

export interface AuditWriterOptions {
  /** Lines held while the sink is busy; past this a line is dropped, counted and logged. */
  readonly maxBuffered: number
  /** Told of every dropped line (a metric); `first` for the first of a run of drops (a log line). */
  readonly onDrop: (dropped: number, first: boolean) => void
  /** Told when a run of drops ends: the `dropped` record with its count went into the chain. */
  readonly onDropsRecorded?: (count: number) => void
  /** Told when a write fails (the lines of that write are lost: counted as dropped). */
  readonly onError: (error: unknown) => void
  /**
   * Milliseconds lines wait to be written together (0: at the end of the current turn). One
   * write(2) per interval instead of one per turn of the event loop: each write costs a syscall
   * and two thread hand-offs, which under load cost more than building the lines.
   */
  readonly flushMs?: number
  /** fdatasync after every write: what was written survives a power loss, not only a crash of the process. */
  readonly fsync?: boolean
}

/**
 * The audit log's writer: appends chained lines without ever making a call wait for the disk.
 * `append` serializes and encodes the entry at once (`pending-lines.ts`) and queues it (the
 * order is the order of calls); one write at a time drains the whole queue, `flushMs` after the
 * first line it finds waiting (at once when `EAGER_LINES` wait, or on `flush`), chaining the
 * batch's lines in place just before it writes them: the SHA-256 of a batch in one loop costs
 * less than one per call interleaved with the rest of each call's work, and the lines and their
 * order are the same. A queue at
 * `maxBuffered` drops the line, and the drop itself goes into the chain as a `dropped` record as
 * soon as there is room, so the file says what it is missing, and whose.
 *
 * The queue is shared by the rule of `idempotency/shares.ts`: a principal's lines may fill at
 * most a quarter of it, and its last eighth is kept for principals with fewer than 16 lines
 * waiting. A line once chained cannot be taken back (the chain would break), so fairness can
 * only refuse at `append`: one caller's flood drops its own lines, never the first lines of
 * anyone else's calls.
 */
export class AuditWriter {
  #head: ChainHead
  /** Entries not yet chained, encoded; numbered on from `#head`. */
  #queue = new PendingLines()
  /**
   * The other buffer, whose batch is being written or was last. Two buffers, each reused: a
   * fresh one per batch (hundreds of KiB outside the V8 heap) cost more than the lines (page
   * faults on every batch, and the collector run early for the external memory).
   */
  #spare = new PendingLines()
  /** Lines of each principal in `#queue`. */
  #waiting = new Map<string, number>()
  #writing: Promise<void> | undefined
  #dropped = 0
  /** Of `#dropped`, how many each principal lost. */
  #droppedBy = new Map<string, number>()
  /** Ends the current wait before a write early (a full batch, `flush`). */
  #wake: (() => void) | undefined
  #hurry = false
  readonly #sink: Sink
  readonly #options: AuditWriterOptions

  private constructor (sink: Sink, head: ChainHead, options: AuditWriterOptions) {
    this.#sink = sink
    this.#head = head
    this.#options = options
  }

  /** `path` is a file (appended to, its chain continued) or `stdout` (a new chain). */
  static async open (path: string, options: AuditWriterOptions): Promise<AuditWriter> {
    if (path === 'stdout') return new AuditWriter(stdoutSink(), EMPTY_CHAIN, options)
    const { head, tornTail } = readHead(path)
    const writer = new AuditWriter(await fileSink(path), head, options)
    // A crash cut the last line short: end it, and say in the chain which line that was.
    if (tornTail !== undefined) {
      writer.#queue.prefix('\n')
      writer.#enqueue({ event: 'resumed', time: new Date().toISOString(), tornLine: tornTail.line, tornSha256: tornTail.sha256 })
    }
    return writer
  }

  /** The chain's last `seq` and `hash` as written so far (after `flush`: of every line appended). */
  get head (): ChainHead {
    return this.#head
  }

  /**
   * Chain `entry` and queue it; never waits. False when the buffer, or `principal`'s share of
   * it, was full (dropped). A line of no principal (the gateway's own) meets the overall bound only.
   */
  append (entry: Readonly<Record<string, unknown>>, principal?: string): boolean {
    return this.appendFields(fieldsOf(entry), principal)
  }

  /**
   * `append` for an entry already written as its fields' JSON text (`fieldsOf`, or the same text
   * built by hand, as `call-line.ts` does for the line every call writes).
   */
  appendFields (fields: string, principal?: string): boolean {
    if (this.#refuses(principal)) {
      this.#dropped++
      if (principal !== undefined) {
        const key = this.#droppedBy.has(principal) || this.#droppedBy.size < NAMED_DROPPERS ? principal : '*'
        this.#droppedBy.set(key, (this.#droppedBy.get(key) ?? 0) + 1)
      }
      this.#options.onDrop(1, this.#dropped === 1)
      return false
    }
    if (this.#dropped > 0) {
      const by = this.#droppedBy.size === 0 ? {} : { principals: Object.fromEntries(this.#droppedBy) }
      this.#enqueue({ event: 'dropped', time: new Date().toISOString(), count: this.#dropped, ...by })
      this.#options.onDropsRecorded?.(this.#dropped)
      this.#dropped = 0
      this.#droppedBy = new Map()
    }
    if (principal !== undefined) this.#waiting.set(principal, (this.#waiting.get(principal) ?? 0) + 1)
    this.#push(fields)
    return true
  }

  #refuses (principal: string | undefined): boolean {
    const max = this.#options.maxBuffered
    const used = this.#queue.length
    if (principal === undefined) return used >= max
    const mine = this.#waiting.get(principal) ?? 0
    return shareRefusal({ used, ownerUsed: mine, cost: 1, max, perOwner: Math.max(1, Math.floor(max / 4)), firstRecords: mine < FIRST_RECORDS }) !== undefined
  }

  /** Resolves once every queued line is written (and synced, with `fsync`). */
  async flush (): Promise<void> {
    this.#hurry = true
    try {
      while (this.#writing !== undefined) {
        this.#wake?.()
        await this.#writing
      }
    } finally {
      this.#hurry = false
    }
  }

  async close (): Promise<void> {
    await this.flush()
    await this.#sink.close()
  }

  #enqueue (entry: Readonly<Record<string, unknown>>): void {
    this.#push(fieldsOf(entry))
  }

  /** Queue one entry's text: serialized when it happened, what the line says is what the entry held then. */
  #push (fields: string): void {
    this.#queue.push(this.#head.seq + this.#queue.length + 1, fields)
    if (this.#writing === undefined) this.#writing = this.#drain()
    else if (this.#queue.length >= EAGER_LINES) this.#wake?.()
  }

  async #drain (): Promise<void> {
    const { fsync = false } = this.#options
    try {
      while (this.#queue.length > 0) {
        await this.#pause()
        const batch = this.#queue
        this.#queue = this.#spare
        this.#spare = batch
        this.#waiting = new Map()
        // Chained when written: the head moves past the batch, written or lost.
        const { bytes, head } = batch.seal(this.#head)
        this.#head = head
        try {
          await this.#sink.write(bytes)
          if (fsync) await this.#sink.sync()
        } catch (error) {
          this.#options.onDrop(batch.length, false)
          this.#options.onError(error)
        } finally {
          batch.clear()
        }
      }
    } finally {
      this.#writing = undefined
    }
  }

  /** Let more lines join the next write: to the end of this turn, or `flushMs`; shorter when woken. */
  async #pause (): Promise<void> {
    const flushMs = this.#hurry || this.#queue.length >= EAGER_LINES ? 0 : this.#options.flushMs ?? 0
    await new Promise<void>(resolve => {
      const timer = flushMs === 0 ? setImmediate(resolve) : setTimeout(resolve, flushMs)
      this.#wake = () => {
        if (flushMs === 0) clearImmediate(timer as NodeJS.Immediate)
        else clearTimeout(timer as NodeJS.Timeout)
        resolve()
      }
    })
    this.#wake = undefined
  }
}

/**
 * Where an existing file's chain stands. Only the head is needed, but the whole file is
 * verified: appending to a broken chain would make the break look like ours.
 */
function readHead (path: string): { head: ChainHead, tornTail?: { line: number, sha256: string } } {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { head: EMPTY_CHAIN }
    throw error
  }
  if (text === '') return { head: EMPTY_CHAIN }
  const verdict = verifyAuditText(text)
  if (verdict.ok) {
    // A whole last line whose newline never made it: add it, or the next line would join it.
    if (!text.endsWith('\n')) appendFileSync(path, '\n')
    return { head: verdict.head }
  }
  if (verdict.torn) {
    const prefix = text.slice(0, text.lastIndexOf('\n') + 1)
    const before = prefix === '' ? { ok: true as const, head: EMPTY_CHAIN } : verifyAuditText(prefix)
    if (before.ok) return { head: before.head, tornTail: { line: verdict.line, sha256: sha256(text.slice(prefix.length)) } }
  }
  throw new Error(`the audit log ${path} does not verify (line ${verdict.line}: ${verdict.reason}); move it aside before starting`)
}

async function fileSink (path: string): Promise<Sink> {
  const handle: FileHandle = await open(path, 'a', 0o600)
  return {
    write: async bytes => {
      // One write(2) takes the whole batch unless the disk fills (then it throws); short writes are finished, not lost.
      for (let at = 0; at < bytes.length;) {
        const { bytesWritten } = await handle.write(bytes, at)
        if (bytesWritten === 0) throw new Error('the audit log took no bytes')
        at += bytesWritten
      }
    },
    sync: async () => { await handle.datasync() },
    close: async () => { await handle.close() },
  }
}

function stdoutSink (): Sink {
  return {
    write: bytes => new Promise((resolve, reject) => { process.stdout.write(bytes, error => { if (error == null) resolve(); else reject(error) }) }),
    sync: async () => {},
    close: async () => {},
  }
}

