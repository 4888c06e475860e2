import { describe, expect, it } from 'vitest'
import { EMPTY_CHAIN, type ChainHead } from '../../src/services/audit/chain.js'
import { chainLine } from './chain-line.js'
import { verifyAuditText } from '../../src/services/audit/verify.js'

function chain (count: number): { lines: string[], head: ChainHead } {
  let head = EMPTY_CHAIN
  const lines: string[] = []
  for (let i = 0; i < count; i++) {
    const next = chainLine(head, { event: 'call', tool: 'notes_write', outcome: i % 3 === 0 ? 'forbidden' : 'ok', n: i })
    lines.push(next.line)
    head = next.head
  }
  return { lines, head }
}

const text = (lines: readonly string[]): string => lines.map(line => `${line}\n`).join('')
const N = 8

describe('the audit hash chain', () => {
  it('an untouched file verifies, with its head', () => {
    const { lines, head } = chain(N)
    expect(verifyAuditText(text(lines))).toEqual({ ok: true, lines: N, head, resumedAfterTear: [] })
    expect(verifyAuditText(text(lines), { head: head.hash }).ok).toBe(true)
    expect(verifyAuditText('')).toMatchObject({ ok: true, lines: 0 })
  })

  it('editing any line fails at that line', () => {
    const { lines } = chain(N)
    for (let i = 0; i < N; i++) {
      const edited = [...lines]
      edited[i] = edited[i]!.replace(/"outcome":"(\w+)"/, '"outcome":"ok "')
      expect(edited[i]).not.toBe(lines[i])
      expect(verifyAuditText(text(edited)), `line ${i + 1}`).toMatchObject({ ok: false, line: i + 1, reason: expect.stringMatching(/^changed/) })
    }
  })

  it('editing a line and rehashing it still fails at that line (the next line holds its old hash)', () => {
    const { lines } = chain(N)
    for (let i = 0; i < N - 1; i++) {
      const record = JSON.parse(lines[i]!) as Record<string, unknown>
      const { hash: _hash, type: _type, seq: _seq, prev: _prev, ...entry } = record
      const prevHead = i === 0 ? EMPTY_CHAIN : { seq: i, hash: (JSON.parse(lines[i - 1]!) as { hash: string }).hash }
      const forged = chainLine(prevHead, { ...entry, outcome: 'ok', tool: 'forged' })
      const edited = [...lines]
      edited[i] = forged.line
      expect(verifyAuditText(text(edited)), `line ${i + 1}`).toMatchObject({ ok: false, line: i + 1 })
    }
  })

  it('deleting any line fails at that line; cutting the last one is caught with the head kept elsewhere', () => {
    const { lines, head } = chain(N)
    for (let i = 0; i < N - 1; i++) {
      const cut = lines.filter((_, j) => j !== i)
      expect(verifyAuditText(text(cut)), `line ${i + 1}`).toMatchObject({ ok: false, line: i + 1, reason: expect.stringMatching(/out of sequence/) })
    }
    const withoutLast = lines.slice(0, -1)
    expect(verifyAuditText(text(withoutLast)).ok).toBe(true)
    expect(verifyAuditText(text(withoutLast), { head: head.hash })).toMatchObject({ ok: false, line: N, reason: expect.stringMatching(/removed from its end/) })
  })

  it('swapping any two neighbouring lines fails at the first of them', () => {
    const { lines } = chain(N)
    for (let i = 0; i < N - 1; i++) {
      const swapped = [...lines]
      swapped[i] = lines[i + 1]!
      swapped[i + 1] = lines[i]!
      expect(verifyAuditText(text(swapped)), `lines ${i + 1} and ${i + 2}`).toMatchObject({ ok: false, line: i + 1 })
    }
  })

  it('a line inserted anywhere fails at it (before the first: at the first, since both start a chain)', () => {
    const { lines } = chain(N)
    const stranger = chainLine(EMPTY_CHAIN, { event: 'call', tool: 'inserted' }).line
    for (let i = 1; i <= N; i++) {
      const inserted = [...lines.slice(0, i), stranger, ...lines.slice(i)]
      expect(verifyAuditText(text(inserted)), `at ${i + 1}`).toMatchObject({ ok: false, line: i + 1 })
    }
    // Two lines each claim to start the chain; which one is the stranger, the file cannot say.
    expect(verifyAuditText(text([stranger, ...lines]))).toMatchObject({ ok: false, line: 2, reason: expect.stringMatching(/repeats seq 1/) })
  })

  it('a torn last line (a write cut short) is reported as torn, with everything before it intact', () => {
    const { lines } = chain(N)
    const whole = text(lines)
    for (const cut of [1, 10, lines.at(-1)!.length - 1]) {
      const torn = whole.slice(0, whole.length - 1 - lines.at(-1)!.length + cut)
      expect(verifyAuditText(torn), `cut at ${cut}`).toMatchObject({ ok: false, line: N, torn: true })
      expect(verifyAuditText(torn.slice(0, torn.lastIndexOf('\n') + 1)).ok).toBe(true)
    }
  })

  it('log lines among audit lines fail, unless told the file is mixed; the chain still catches edits there', () => {
    const { lines } = chain(4)
    const log = JSON.stringify({ level: 30, msg: 'tool call' })
    const mixed = [log, lines[0]!, lines[1]!, log, 'plain text', lines[2]!, lines[3]!]
    expect(verifyAuditText(text(mixed))).toMatchObject({ ok: false, line: 1 })
    expect(verifyAuditText(text(mixed), { mixed: true })).toMatchObject({ ok: true, lines: 7 })
    const tampered = mixed.filter(line => line !== lines[1])
    // The file's own numbering: log, line 1, log, text, then line 3 where line 2 was expected.
    expect(verifyAuditText(text(tampered), { mixed: true })).toMatchObject({ ok: false, line: 5 })
  })
})
