import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AuditWriter, type AuditWriterOptions } from '../../src/services/audit/writer.js'
import { verifyAuditText } from '../../src/services/audit/verify.js'

const tmp = (): string => join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.log')
const size = (path: string): number => (existsSync(path) ? statSync(path).size : 0)
const options = (more: Partial<AuditWriterOptions>): AuditWriterOptions => ({ maxBuffered: 10_000, onDrop: () => {}, onError: () => {}, ...more })
const turns = async (count: number): Promise<void> => { for (let i = 0; i < count; i++) await new Promise(resolve => setImmediate(resolve)) }

describe('when audit lines reach the file', () => {
  it('lines wait for the flush interval together; flush writes them at once, without waiting it out', async () => {
    const path = tmp()
    const writer = await AuditWriter.open(path, options({ flushMs: 60_000 }))
    for (let i = 0; i < 3; i++) writer.append({ event: 'call', n: i })
    await turns(20)
    expect(size(path)).toBe(0)
    await writer.flush() // within the test timeout, far below the interval
    const text = readFileSync(path, 'utf8')
    expect(verifyAuditText(text)).toMatchObject({ ok: true, lines: 3 })
    await writer.close()
  })

  it('a line says what its entry held when appended, though it is chained when written; the head follows the writes', async () => {
    const path = tmp()
    const writer = await AuditWriter.open(path, options({ flushMs: 60_000 }))
    const mutated = ['notes/a']
    writer.append({ event: 'call', n: 1, mutated })
    writer.append({ event: 'call', n: 2 })
    mutated.push('notes/b') // after the call's line was appended: not part of it
    expect(writer.head.seq).toBe(0)
    await writer.flush()
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map(l => [l.seq, l.n, l.mutated])).toEqual([[1, 1, ['notes/a']], [2, 2, undefined]])
    expect(writer.head).toEqual({ seq: 2, hash: lines[1]!.hash })
    await writer.close()
  })

  it('a full batch is written before the interval ends', async () => {
    const path = tmp()
    const writer = await AuditWriter.open(path, options({ flushMs: 60_000 }))
    for (let i = 0; i < 1_024; i++) writer.append({ event: 'call', n: i })
    for (let waited = 0; waited < 200 && size(path) === 0; waited++) await turns(1)
    expect(size(path)).toBeGreaterThan(0)
    await writer.close()
    expect(verifyAuditText(readFileSync(path, 'utf8'))).toMatchObject({ ok: true, lines: 1_024 })
  })

  it('with flushMs 0 a line is written once the turn that chained it ends, with fsync on or off', async () => {
    for (const fsync of [false, true]) {
      const path = tmp()
      const writer = await AuditWriter.open(path, options({ flushMs: 0, fsync }))
      writer.append({ event: 'call', n: 1 })
      expect(size(path)).toBe(0)
      await writer.flush()
      expect(verifyAuditText(readFileSync(path, 'utf8'))).toMatchObject({ ok: true, lines: 1 })
      await writer.close()
    }
  })
})

describe('one buffer shared by every principal', () => {
  it('one principal\'s flood drops its own lines past its share, never another\'s first lines, and the drop names whose', async () => {
    const path = tmp()
    // 16 lines: a principal's share is 4, and the last 2 are kept for principals with fewer than 16 waiting.
    const writer = await AuditWriter.open(path, options({ maxBuffered: 16, flushMs: 60_000 }))
    const accepted = Array.from({ length: 20 }, (_, i) => writer.append({ event: 'call', by: 'flood', n: i }, 'flood'))
    expect(accepted.filter(Boolean)).toHaveLength(4)
    expect(writer.append({ event: 'call', by: 'other' }, 'other')).toBe(true)
    await writer.close()
    const lines = readFileSync(path, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map(line => line.event === 'dropped' ? `dropped ${JSON.stringify(line.principals)} ${String(line.count)}` : line.by))
      .toEqual(['flood', 'flood', 'flood', 'flood', 'dropped {"flood":16} 16', 'other'])
  })
})

