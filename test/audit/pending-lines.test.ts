import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { fieldsOf, type ChainHead } from '../../src/services/audit/chain.js'
import { chainLine } from './chain-line.js'
import { PendingLines } from '../../src/services/audit/pending-lines.js'

/** Any entry: keys and values with quotes, control characters, surrogates, emoji; nested JSON. */
const entry = fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.oneof(fc.string({ unit: 'binary' }), fc.jsonValue()), { maxKeys: 6 })
const head = fc.record({ seq: fc.oneof(fc.nat({ max: 120 }), fc.nat(), fc.constantFrom(9, 99, 999, 9_999, 99_999, 2 ** 53 - 40)), hash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map(b => Buffer.from(b).toString('hex')) })

/** What the string form gives for the same entries: each line and its newline, one after the other. */
function expected (from: ChainHead, entries: ReadonlyArray<Readonly<Record<string, unknown>>>): { text: string, head: ChainHead } {
  let text = ''
  let at = from
  for (const e of entries) {
    const next = chainLine(at, e)
    text += `${next.line}\n`
    at = next.head
  }
  return { text, head: at }
}

describe('pending lines, encoded when appended and sealed in place', () => {
  it('give the bytes of the lines chained one by one, batch after batch through the same buffers, behind a prefix', () => {
    fc.assert(fc.property(head, fc.array(fc.array(entry, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 4 }), fc.constantFrom('', '\n'), (from, batches, prefix) => {
      const pairs = [new PendingLines(), new PendingLines()]
      let at: ChainHead = from
      batches.forEach((entries, b) => {
        const pending = pairs[b % 2]!
        if (b === 0 && prefix !== '') pending.prefix(prefix)
        entries.forEach((e, i) => { pending.push(at.seq + 1 + i, fieldsOf(e)) })
        expect(pending.length).toBe(entries.length)
        const sealed = pending.seal(at)
        const want = expected(at, entries)
        expect(sealed.bytes.equals(Buffer.from((b === 0 ? prefix : '') + want.text))).toBe(true)
        expect(sealed.head).toEqual(want.head)
        at = sealed.head
        pending.clear()
        expect(pending.length).toBe(0)
      })
    }), { numRuns: 400 })
  })

  it('grow past their first buffer without losing what was pushed before, and let a large one go once written', () => {
    const pending = new PendingLines()
    const big = { event: 'call', input: 'é'.repeat(300_000) } // past the first buffer and the kept size, in two-byte characters
    const entries = [{ event: 'call', n: 1 }, big, { event: 'call', n: 3 }, big]
    entries.forEach((e, i) => { pending.push(i + 1, fieldsOf(e)) })
    const sealed = pending.seal({ seq: 0, hash: '0'.repeat(64) })
    expect(sealed.bytes.toString('utf8')).toBe(expected({ seq: 0, hash: '0'.repeat(64) }, entries).text)
    pending.clear()
    pending.push(1, fieldsOf({ event: 'call', n: 5 }))
    expect(pending.seal({ seq: 0, hash: '0'.repeat(64) }).bytes.toString('utf8')).toBe(expected({ seq: 0, hash: '0'.repeat(64) }, [{ event: 'call', n: 5 }]).text)
  })

  it('a prefix goes only before the first line', () => {
    const pending = new PendingLines()
    pending.push(1, '"event":"call"')
    expect(() => { pending.prefix('\n') }).toThrow(/before the first line/)
  })
})
