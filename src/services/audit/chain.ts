import * as crypto from 'node:crypto'

/*
 * The hash chain of the audit log. Every line is one JSON object: `seq` counts from 1, `prev`
 * is the `hash` of the line before (GENESIS for the first), and `hash`, always the last field,
 * is the SHA-256 (hex) of the line's own text up to it. A changed line no longer matches its
 * hash (or, rehashed, no longer matches the `prev` the next line holds); a removed, inserted
 * or swapped line breaks `seq`. The chain proves the lines were not edited piecemeal; whoever
 * can rewrite the whole file can rewrite the whole chain, so keep the head (the last `hash`,
 * logged at shutdown) somewhere else too.
 */

const GENESIS = '0'.repeat(64)

/** Marks audit lines, so they can be told apart from log lines when both go to stdout. */
export const AUDIT_TYPE = 'toolgate.audit/v1'

const HASH_SUFFIX = /,"hash":"([0-9a-f]{64})"\}$/

// `crypto.hash` (one call, no Hash object) is a third faster; Node 20.11, the oldest supported, lacks it.
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array) => string }).hash

/** Hex SHA-256 of a string's UTF-8, or of bytes. */
export function sha256 (data: string | Uint8Array): string {
  return oneShot === undefined ? crypto.createHash('sha256').update(data).digest('hex') : oneShot('sha256', data)
}

/** Where a chain stands: the last `seq` and the last `hash`. */
export interface ChainHead {
  readonly seq: number
  readonly hash: string
}

export const EMPTY_CHAIN: ChainHead = { seq: 0, hash: GENESIS }

/**
 * An entry's members as JSON text without the braces (`"event":"call",...`): what a line holds
 * between `prev` and `hash`. A line is then exactly JSON.stringify({ type, seq, prev, ...entry, hash }).
 */
export function fieldsOf (entry: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(entry).slice(1, -1)
}

/** A line up to its hash: what the hash is taken of. */
function lineBody (seq: number, prev: string, fields: string): string {
  return `${LINE_HEAD}${seq}${PREV_KEY}${prev}"${fields === '' ? '' : `,${fields}`}`
}

const LINE_HEAD = `{"type":"${AUDIT_TYPE}","seq":`
const PREV_KEY = ',"prev":"'
const HASH_KEY = ',"hash":"'
/** What follows a line's fields: its hash, the object's end, the newline. */
const TAIL_LENGTH = HASH_KEY.length + GENESIS.length + '"}\n'.length

/*
 * A line in bytes, written in two steps: `writeUnsealed` when its entry happens, with `prev` and
 * `hash` left as zeros of their width, and `sealLine` when the lines before it are chained, which
 * writes both in place. Encoding a line while its text is fresh, into the buffer that is then
 * written as it is, costs half of encoding it at write time (0.5 us a line against 1.0: by then
 * the text had gone cold in the cache), and a line's text is encoded once (as one string it was
 * encoded for its hash, again for the write, and copied into the batch).
 */

/** The bytes an unsealed line of these fields can take at most (UTF-8: 3 bytes per UTF-16 unit). */
export function lineBytesAtMost (fields: string): number {
  return 3 * fields.length + LINE_HEAD.length + 16 + PREV_KEY.length + GENESIS.length + 2 + TAIL_LENGTH
}

/** Write line `seq` with these fields at `at`, `prev` and `hash` zeros; the end of its newline. */
export function writeUnsealed (buffer: Buffer, at: number, seq: number, fields: string): number {
  return at + buffer.write(`${lineBody(seq, GENESIS, fields)}${HASH_KEY}${GENESIS}"}\n`, at, 'utf8')
}

/** Seal the unsealed line `seq` in `buffer[start, end)` after `prev`: its `prev` and `hash` written in; its hash. */
export function sealLine (buffer: Buffer, start: number, end: number, seq: number, prev: string): string {
  buffer.write(prev, start + LINE_HEAD.length + digits(seq) + PREV_KEY.length, 'latin1')
  const hashAt = end - TAIL_LENGTH
  const hash = sha256(buffer.subarray(start, hashAt))
  buffer.write(hash, hashAt + HASH_KEY.length, 'latin1')
  return hash
}

function digits (seq: number): number {
  return seq < 10 ? 1 : seq < 100 ? 2 : seq < 1_000 ? 3 : seq < 10_000 ? 4 : seq < 100_000 ? 5 : String(seq).length
}

/** The hash a line carries and the hash its text has; undefined when it carries none. */
export function hashesOf (line: string): { readonly claimed: string, readonly actual: string } | undefined {
  const match = HASH_SUFFIX.exec(line)
  if (match === null) return undefined
  return { claimed: match[1]!, actual: sha256(line.slice(0, match.index)) }
}
