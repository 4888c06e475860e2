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
const oneShot = (crypto as { hash?: (algorithm: string, data: string) => string }).hash

export function sha256 (text: string): string {
  return oneShot === undefined ? crypto.createHash('sha256').update(text).digest('hex') : oneShot('sha256', text)
}

/** Where a chain stands: the last `seq` and the last `hash`. */
export interface ChainHead {
  readonly seq: number
  readonly hash: string
}

export const EMPTY_CHAIN: ChainHead = { seq: 0, hash: GENESIS }

/** Append one entry: its line (without newline) and the new head. */
export function chainLine (head: ChainHead, entry: Readonly<Record<string, unknown>>): { line: string, head: ChainHead } {
  return chainMembers(head, JSON.stringify(entry))
}

/**
 * The same from the entry's JSON text (`JSON.stringify(entry)`), so that an entry can be
 * serialized when it happens and chained later: the text is the same as
 * JSON.stringify({ type, seq, prev, ...entry }), without copying the entry into a new object.
 */
export function chainMembers (head: ChainHead, members: string): { line: string, head: ChainHead } {
  const seq = head.seq + 1
  const body = `{"type":"${AUDIT_TYPE}","seq":${seq},"prev":"${head.hash}"${members === '{}' ? '' : `,${members.slice(1, -1)}`}`
  const hash = sha256(body)
  return { line: `${body},"hash":"${hash}"}`, head: { seq, hash } }
}

/** The hash a line carries and the hash its text has; undefined when it carries none. */
export function hashesOf (line: string): { readonly claimed: string, readonly actual: string } | undefined {
  const match = HASH_SUFFIX.exec(line)
  if (match === null) return undefined
  return { claimed: match[1]!, actual: sha256(line.slice(0, match.index)) }
}
