import { open, readFile, stat } from 'node:fs/promises'
import { z } from 'zod'
import { AUDIT_TYPE } from '../audit/chain.js'
import { verifyAuditText } from '../audit/verify.js'

/** How much of the file's end the tail reads: some thousands of lines. */
const TAIL_BYTES = 512 * 1024
/** Past this, verification is the command's work, not a request's (`toolgate audit verify`). */
const MAX_VERIFY_BYTES = 256 * 1024 * 1024

export const AuditLineSchema = z.record(z.string(), z.unknown()).describe('One audit record as written, less its `input` (the console never shows an input)')

export const AuditVerdictSchema = z.object({
  ok: z.boolean(),
  records: z.number().int().describe('Lines verified'),
  headSeq: z.number().int().optional().describe('The chain\'s last seq, when it holds'),
  headHash: z.string().optional(),
  line: z.number().int().optional().describe('The first broken line (1-based), when it does not hold'),
  reason: z.string().optional(),
  bytes: z.number().int(),
  tookMs: z.number(),
  at: z.string().describe('When the verification ran (ISO 8601)'),
}).meta({ id: 'AuditVerdict' })
type AuditVerdict = z.output<typeof AuditVerdictSchema>

/** What the console needs of the running trail: its file and where this process's chain stands. */
export interface AuditSource {
  readonly path: string
  /** Write out what is buffered, so that the file holds every line up to `head`. */
  flush (): Promise<void>
  readonly head: { readonly seq: number, readonly hash: string }
}

/**
 * The audit trail as the console reads it: the file's last lines, and its chain verified on
 * demand. Verification first flushes what this process buffered, then checks every line and
 * that the chain ends where this process's does: a line changed, removed, inserted, or cut from
 * the end is named. One verification runs at a time; a request that arrives while one runs
 * shares its verdict.
 */
export class AuditView {
  #running: Promise<AuditVerdict> | undefined

  constructor (readonly source: AuditSource) {}

  /** The last `max` records (or the one of `callId`) of the file's last half megabyte, newest last. */
  async tail (max: number, callId?: string): Promise<{ readonly lines: Array<Record<string, unknown>>, readonly truncated: boolean }> {
    const { text, truncated } = await readEnd(this.source.path, TAIL_BYTES)
    const lines: Array<Record<string, unknown>> = []
    for (const raw of text.split('\n')) {
      const record = parse(raw)
      if (record === undefined) continue
      if (callId !== undefined && record.callId !== callId) continue
      delete record.input
      lines.push(record)
    }
    return { lines: lines.slice(-max), truncated }
  }

  async verify (): Promise<AuditVerdict> {
    this.#running ??= this.#verify().finally(() => { this.#running = undefined })
    return await this.#running
  }

  async #verify (): Promise<AuditVerdict> {
    const started = performance.now()
    await this.source.flush()
    const head = this.source.head
    const { size } = await stat(this.source.path)
    const done = (verdict: Omit<AuditVerdict, 'bytes' | 'tookMs' | 'at'>): AuditVerdict =>
      ({ ...verdict, bytes: size, tookMs: Math.round((performance.now() - started) * 10) / 10, at: new Date().toISOString() })
    if (size > MAX_VERIFY_BYTES) {
      return done({ ok: false, records: 0, reason: `the file holds ${size} bytes, more than the ${MAX_VERIFY_BYTES} a request verifies; run \`toolgate audit verify ${this.source.path}\`` })
    }
    // Lines written after the flush are past the head this process knows: verified up to it.
    const text = upTo(await readFile(this.source.path, 'utf8'), head.seq)
    const verdict = verifyAuditText(text, head.seq === 0 ? {} : { head: head.hash })
    if (!verdict.ok) return done({ ok: false, records: verdict.line - 1, line: verdict.line, reason: verdict.reason })
    return done({ ok: true, records: verdict.lines, headSeq: verdict.head.seq, headHash: verdict.head.hash })
  }
}

/** The text through the line of `seq` (all of it when that line is not found: verification then says why). */
function upTo (text: string, seq: number): string {
  const start = `{"type":"${AUDIT_TYPE}","seq":${seq},`
  const at = text.startsWith(start) ? 0 : text.lastIndexOf(`\n${start}`)
  if (seq === 0 || at < 0) return text
  const end = text.indexOf('\n', at + 1)
  return end < 0 ? text : text.slice(0, end + 1)
}

async function readEnd (path: string, bytes: number): Promise<{ text: string, truncated: boolean }> {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    const start = Math.max(0, size - bytes)
    const buffer = Buffer.alloc(size - start)
    await handle.read(buffer, 0, buffer.length, start)
    const text = buffer.toString('utf8')
    // From the middle of the file: the first line is partial.
    return { text: start === 0 ? text : text.slice(text.indexOf('\n') + 1), truncated: start > 0 }
  } finally {
    await handle.close()
  }
}

function parse (line: string): Record<string, unknown> | undefined {
  if (line === '') return undefined
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
