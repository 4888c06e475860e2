import { AUDIT_TYPE, sha256, type ChainHead } from '../../src/services/audit/chain.js'

/**
 * One entry appended to a chain, written from the format itself (`type`, `seq`, `prev`, the
 * entry's members as JSON writes them, `hash`; the hash taken of the text before `,"hash"`),
 * not from the writer's code: the oracle the writer's lines are held to. (Not one object for
 * JSON.stringify: an entry's integer-like keys would then come first.)
 */
export function chainLine (head: ChainHead, entry: Readonly<Record<string, unknown>>): { line: string, head: ChainHead } {
  const seq = head.seq + 1
  const members = JSON.stringify(entry).slice(1, -1)
  const body = `{"type":${JSON.stringify(AUDIT_TYPE)},"seq":${seq},"prev":${JSON.stringify(head.hash)}${members === '' ? '' : `,${members}`}`
  const hash = sha256(body)
  return { line: `${body},"hash":"${hash}"}`, head: { seq, hash } }
}
