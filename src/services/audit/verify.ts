import { AUDIT_TYPE, EMPTY_CHAIN, hashesOf, sha256, type ChainHead } from './chain.js'

export type Verdict =
  | { readonly ok: true, readonly lines: number, readonly head: ChainHead, readonly resumedAfterTear: readonly number[] }
  | { readonly ok: false, readonly line: number, readonly reason: string, readonly torn: boolean }

/**
 * Check a whole audit file and name the first broken line (1-based, as an editor counts): a
 * line that is not an audit record, one whose text no longer matches its hash, one whose
 * predecessor was changed and rehashed (the `prev` it holds differs), or one out of sequence (a
 * line before it removed, or lines inserted or swapped). A last line without its newline that
 * does not parse is a torn write (a crash mid-write): reported as torn, every line before it
 * verified. A torn line the gateway found at its next start is followed by a `resumed` record
 * naming it (line and SHA-256); such a line is accepted and listed. `mixed` skips lines that are
 * not audit records (a captured stdout with log lines in it); the chain still covers every
 * audit line, so a removed or altered one is still found.
 */
export interface VerifyOptions {
  /** Skip lines that are not audit records (a captured stdout that also holds the logs). */
  readonly mixed?: boolean
  /**
   * The head hash recorded elsewhere (the gateway logs it at shutdown). Without it, lines cut
   * from the end, or a whole file rewritten, leave a chain that is intact as far as it goes.
   */
  readonly head?: string
}

export function verifyAuditText (text: string, options: VerifyOptions = {}): Verdict {
  const lines = text.split('\n')
  const endsWithNewline = lines.at(-1) === ''
  if (endsWithNewline) lines.pop()
  let head: ChainHead = EMPTY_CHAIN
  let torn: { readonly line: number, readonly sha256: string } | undefined
  const resumedAfterTear: number[] = []
  for (let i = 0; i < lines.length; i++) {
    const number = i + 1
    const line = lines[i]!
    const record = parse(line)
    // `AUDIT_LOG=stdout` shares the stream with the JSON logs: their lines are not the chain's.
    if (options.mixed === true && record?.type !== AUDIT_TYPE && !(i === lines.length - 1 && !endsWithNewline)) continue
    if (record === undefined || record.type !== AUDIT_TYPE) {
      if (i === lines.length - 1 && !endsWithNewline) return fail(number, 'torn: the last line is incomplete (a write cut short); every line before it verifies', true)
      if (torn !== undefined || record !== undefined) return fail(number, 'not an audit record')
      torn = { line: number, sha256: sha256(line) } // acceptable only if the next line resumes after it
      continue
    }
    if (torn !== undefined) {
      if (record.event !== 'resumed' || record.tornLine !== torn.line || record.tornSha256 !== torn.sha256) return fail(torn.line, 'not an audit record')
      resumedAfterTear.push(torn.line)
      torn = undefined
    }
    const hashes = hashesOf(line)
    if (hashes === undefined || hashes.claimed !== hashes.actual) return fail(number, 'changed: its text does not match its hash')
    if (typeof record.seq === 'number' && record.seq >= 1 && record.seq <= head.seq) {
      return fail(number, `out of sequence: repeats seq ${record.seq}; a line was inserted before it, or lines were reordered`)
    }
    if (record.seq !== head.seq + 1) {
      return fail(number, `out of sequence (seq ${String(record.seq)}, expected ${head.seq + 1}): a line before it was removed, or lines were inserted or reordered`)
    }
    if (record.prev !== head.hash) {
      return number === 1 ? fail(1, 'changed: the first line does not start the chain') : fail(number - 1, `changed: line ${number} holds another hash for it`)
    }
    head = { seq: record.seq as number, hash: hashes.claimed }
  }
  if (torn !== undefined) return fail(torn.line, 'not an audit record')
  if (options.head !== undefined && options.head !== head.hash) {
    return fail(lines.length + 1, `the chain ends at seq ${head.seq} with another hash than the head given: lines were removed from its end, or the file was rewritten`)
  }
  return { ok: true, lines: lines.length, head, resumedAfterTear }
}

function fail (line: number, reason: string, torn = false): Verdict {
  return { ok: false, line, reason, torn }
}

function parse (line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}
