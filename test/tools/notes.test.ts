import { describe, expect, it } from 'vitest'
import shipped, { createNotesTools, NOTE_MAX_CHARS } from '../../tools/notes.js'
import { MemoryNotesStore } from '../../tools/notes/store.js'
import { expectFailure, fakeApp, harness } from './app.js'

const alice = fakeApp({ principal: { id: 'alice' } })
const bob = fakeApp({ principal: { id: 'bob' } })

function notes (limits?: ConstructorParameters<typeof MemoryNotesStore>[0]) {
  return harness(createNotesTools(new MemoryNotesStore(limits)), alice)
}

describe('notes', () => {
  it('writes, lists and reads a note', async () => {
    const h = notes()
    const { value: written } = await h.call('notes_write', { key: 'todo', text: 'buy milk' })
    expect(written).toMatchObject({ key: 'todo', action: 'create', chars: 8, locked: false })
    const { value: list } = await h.call('notes_list', {})
    expect(list).toMatchObject({ notes: [{ key: 'todo', chars: 8, locked: false }], count: 1, limit: 100 })
    const { value: note } = await h.call('notes_read', { key: 'todo' })
    expect(note).toMatchObject({ key: 'todo', text: 'buy milk', locked: false })
  })

  it('lists by prefix, sorted by key', async () => {
    const h = notes()
    for (const key of ['b/2', 'a', 'b/1']) await h.call('notes_write', { key, text: key })
    const { value } = await h.call<{ notes: Array<{ key: string }> }>('notes_list', { prefix: 'b/' })
    expect(value.notes.map(n => n.key)).toEqual(['b/1', 'b/2'])
  })

  it('keeps each principal\'s notes private', async () => {
    const h = notes()
    await h.call('notes_write', { key: 'secret', text: 'alice only' })
    await expectFailure(h.call('notes_read', { key: 'secret' }, { app: bob }), 404, 'NOTE_NOT_FOUND')
    const { value } = await h.call('notes_list', {}, { app: bob })
    expect(value).toMatchObject({ notes: [], count: 0 })
    await h.call('notes_write', { key: 'secret', text: 'bob\'s own' }, { app: bob })
    const { value: mine } = await h.call('notes_read', { key: 'secret' })
    expect(mine).toMatchObject({ text: 'alice only' })
  })

  it('reading a missing note is 404 NOTE_NOT_FOUND', async () => {
    await expectFailure(notes().call('notes_read', { key: 'nope' }), 404, 'NOTE_NOT_FOUND')
  })

  it('validates keys and text size by schema', async () => {
    const h = notes()
    for (const key of ['', '../etc', '-x', 'a'.repeat(129), 'white space']) {
      await expectFailure(h.call('notes_write', { key, text: 'x' }), 400, 'TOOLGATE_INVALID_INPUT')
    }
    const error = await expectFailure(h.call('notes_write', { key: 'big', text: 'x'.repeat(NOTE_MAX_CHARS + 1) }), 400, 'TOOLGATE_INVALID_INPUT')
    expect(error.extensions.errors).toEqual([expect.objectContaining({ pointer: '/text' })])
    await h.call('notes_write', { key: 'max', text: 'x'.repeat(NOTE_MAX_CHARS) })
  })

  it('refuses to replace an existing note without overwrite (409 NOTE_EXISTS)', async () => {
    const h = notes()
    await h.call('notes_write', { key: 'k', text: 'one' })
    await expectFailure(h.call('notes_write', { key: 'k', text: 'two' }), 409, 'NOTE_EXISTS')
    const { value } = await h.call('notes_write', { key: 'k', text: 'two', overwrite: true })
    expect(value).toMatchObject({ action: 'replace', chars: 3 })
    expect((await h.call('notes_read', { key: 'k' })).value).toMatchObject({ text: 'two' })
  })

  it('is bounded per principal: 507 NOTES_FULL, and replacing still works when full', async () => {
    const h = notes({ maxNotesPerOwner: 2 })
    await h.call('notes_write', { key: 'a', text: '1' })
    await h.call('notes_write', { key: 'b', text: '2' })
    const error = await expectFailure(h.call('notes_write', { key: 'c', text: '3' }), 507, 'NOTES_FULL')
    expect(error.message).toMatch(/2 notes/)
    await h.call('notes_write', { key: 'a', text: 'again', overwrite: true })
    await h.call('notes_write', { key: 'c', text: '3' }, { app: bob })
  })

  it('is bounded in total across principals', async () => {
    const h = notes({ maxNotesTotal: 1 })
    await h.call('notes_write', { key: 'a', text: '1' })
    await expectFailure(h.call('notes_write', { key: 'a', text: '1' }, { app: bob }), 507, 'NOTES_FULL')
    await h.call('notes_delete', { key: 'a' })
    await h.call('notes_write', { key: 'a', text: '1' }, { app: bob })
  })

  it('deletes a note for good', async () => {
    const h = notes()
    await h.call('notes_write', { key: 'gone', text: 'bye' })
    const { value, record } = await h.call('notes_delete', { key: 'gone' })
    expect(value).toEqual({ key: 'gone', deleted: true, chars: 3 })
    expect(record.mutatedResources).toEqual(['note:gone'])
    await expectFailure(h.call('notes_read', { key: 'gone' }), 404, 'NOTE_NOT_FOUND')
    await expectFailure(h.call('notes_delete', { key: 'gone' }), 404, 'NOTE_NOT_FOUND')
  })

  it('dry-runs a delete: a proposal, and nothing deleted', async () => {
    const h = notes()
    await h.call('notes_write', { key: 'keep', text: 'still here' })
    const { value, record } = await h.call('notes_delete', { key: 'keep' }, { dryRun: true })
    expect(value).toMatchObject({ key: 'keep', action: 'delete', chars: 10, locked: false })
    expect(record).toMatchObject({ outcome: 'dry_run', executed: false })
    expect((await h.call('notes_read', { key: 'keep' })).value).toMatchObject({ text: 'still here' })
  })

  it('dry-runs a delete of a missing note as the 404 the real call would give', async () => {
    await expectFailure(notes().call('notes_delete', { key: 'missing' }, { dryRun: true }), 404, 'NOTE_NOT_FOUND')
  })

  it('dry-runs a write: create or replace, nothing written', async () => {
    const h = notes()
    expect((await h.call('notes_write', { key: 'n', text: 'x' }, { dryRun: true })).value).toMatchObject({ action: 'create' })
    await expectFailure(h.call('notes_read', { key: 'n' }), 404, 'NOTE_NOT_FOUND')
    await h.call('notes_write', { key: 'n', text: 'x' })
    expect((await h.call('notes_write', { key: 'n', text: 'yy', overwrite: true }, { dryRun: true })).value).toMatchObject({ action: 'replace', chars: 2 })
  })

  describe('locked notes need escalation', () => {
    async function withLocked () {
      const h = notes()
      await h.call('notes_write', { key: 'pinned', text: 'important', locked: true })
      return h
    }

    it('refuses to replace or delete a locked note without escalation (423 NOTE_LOCKED)', async () => {
      const h = await withLocked()
      await expectFailure(h.call('notes_write', { key: 'pinned', text: 'x', overwrite: true }), 423, 'NOTE_LOCKED')
      await expectFailure(h.call('notes_delete', { key: 'pinned' }), 423, 'NOTE_LOCKED')
      await expectFailure(h.call('notes_delete', { key: 'pinned' }, { dryRun: true }), 423, 'NOTE_LOCKED')
      expect((await h.call('notes_read', { key: 'pinned' })).value).toMatchObject({ text: 'important', locked: true })
    })

    it('an approved escalation replaces and deletes it', async () => {
      const h = await withLocked()
      const approved = { escalate: true, bind: { escalationApproved: true } }
      const { record } = await h.call('notes_write', { key: 'pinned', text: 'new', overwrite: true, locked: true }, approved)
      expect(record.escalated).toBe(true)
      await h.call('notes_delete', { key: 'pinned' }, approved)
      await expectFailure(h.call('notes_read', { key: 'pinned' }), 404, 'NOTE_NOT_FOUND')
    })

    it('escalation without approval waits for a person and deletes nothing', async () => {
      const h = await withLocked()
      const result = await h.call('notes_delete', { key: 'pinned' }, { escalate: true })
      expect(result.approval).toMatchObject({ status: 'pending', escalate: true, tool: 'notes_delete' })
      expect((await h.call('notes_read', { key: 'pinned' })).value).toMatchObject({ text: 'important' })
    })

    it('reading tools do not support escalation', async () => {
      await expectFailure(notes().call('notes_read', { key: 'x' }, { escalate: true, bind: { escalationApproved: true } }), 400, 'TOOLGATE_ESCALATION_UNSUPPORTED')
    })
  })

  it('plan mode may list and read but not write or delete', async () => {
    const h = notes()
    await h.call('notes_list', {}, { bind: { mode: 'plan' } })
    await expectFailure(h.call('notes_write', { key: 'a', text: 'b' }, { bind: { mode: 'plan' } }), 403, 'TOOLGATE_PLAN_MODE')
    await expectFailure(h.call('notes_delete', { key: 'a' }, { bind: { mode: 'plan' } }), 403, 'TOOLGATE_PLAN_MODE')
  })

  it('declares delete and write irreversible, reads read-only', () => {
    const byId = Object.fromEntries(shipped.map(t => [t.id, t]))
    expect(Object.keys(byId)).toEqual(['notes_list', 'notes_read', 'notes_write', 'notes_delete'])
    expect(byId.notes_delete).toMatchObject({ effects: ['irreversible'], isReadOnly: false, supportsEscalation: true })
    expect(byId.notes_write).toMatchObject({ effects: ['irreversible'], isReadOnly: false, supportsEscalation: true })
    expect(byId.notes_read).toMatchObject({ effects: [], isReadOnly: true, isConcurrencySafe: true })
  })
})
