import { z } from 'zod'
import { defineTool, type AnyTool } from 'toolgate'
import type { GatewayContext } from './lib/context.js'
import { MemoryNotesStore, NOTE_ERRORS, servedNotes, type Note, type NotesLimits } from './notes/store.js'

/*
 * A small notes store. Notes are private: each principal (ctx.app.principal.id) has its own
 * key space and never sees another's notes, so no tool here declares `affects-others`.
 * Locked notes are the sandbox: replacing or deleting one needs an escalated call, which the
 * gateway grants only with an explicit approval (`supportsEscalation`).
 */

export const NOTE_MAX_CHARS = 16_384

const key = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/, 'a key: 1-128 letters, digits, ".", "_", "/" or "-", starting with a letter or digit')
  .describe('The note\'s key, e.g. "todo" or "projects/toolgate". Keys are private to the caller.')
const keyInput = z.object({ key }).strict()

const noteOutput = z.object({
  key: z.string().describe('The note\'s key.'),
  text: z.string().describe('The note\'s text.'),
  locked: z.boolean().describe('Locked notes can be replaced or deleted only by an escalated call.'),
  updatedAt: z.iso.datetime().describe('Last write, ISO 8601 UTC.'),
})

/** Resources for the audit record: `note:<key>` (the owner is the call's principal). */
function noteResource (input: unknown): string[] {
  const k = (input as { key?: unknown } | null)?.key
  return typeof k === 'string' ? [`note:${k}`] : []
}

const ownerOf = (ctx: GatewayContext): string => ctx.app.principal.id

/** The four notes tools over one store. The default export uses a fresh in-memory store. */
export function createNotesTools (store = new MemoryNotesStore()): AnyTool[] {
  return [
    defineTool({
      id: 'notes_list',
      kind: 'read',
      description: 'List your notes (keys, sizes, lock state), optionally only those whose key starts with a prefix. Call it before reading to find a note\'s key.',
      shortDescription: 'List your notes (prefix: optional key prefix).',
      inputSchema: z.object({
        prefix: z.string().max(128).default('').describe('Only notes whose key starts with this; empty lists all.'),
      }).strict(),
      outputSchema: z.object({
        notes: z.array(z.object({ key: z.string(), chars: z.number().int(), locked: z.boolean(), updatedAt: z.iso.datetime() })).describe('Matching notes, sorted by key.'),
        count: z.number().int().describe('How many notes you hold in total.'),
        limit: z.number().int().describe('How many notes you may hold.'),
      }),
      isReadOnly: true,
      isConcurrencySafe: true,
      authorize () {},
      execute ({ prefix }, ctx: GatewayContext) {
        const owner = ownerOf(ctx)
        const notes = store.list(owner, prefix).map(n => ({ key: n.key, chars: n.text.length, locked: n.locked, updatedAt: n.updatedAt }))
        return { notes, count: store.count(owner), limit: store.limits.maxNotesPerOwner }
      },
    }),
    defineTool({
      id: 'notes_read',
      kind: 'read',
      description: 'Read one of your notes by key. Fails with NOTE_NOT_FOUND (404) when there is no such note.',
      shortDescription: 'Read a note (key).',
      inputSchema: keyInput,
      outputSchema: noteOutput,
      errors: [NOTE_ERRORS.notFound],
      isReadOnly: true,
      isConcurrencySafe: true,
      touchedResourcesOf: noteResource,
      authorize () {},
      execute: (input, ctx: GatewayContext): Note => store.require(ownerOf(ctx), input.key),
    }),
    defineTool({
      id: 'notes_write',
      kind: 'write',
      description: `Save a note under a key (at most ${NOTE_MAX_CHARS} characters). An existing note is replaced only with overwrite: true, and a locked one only by an escalated call. Fails with NOTE_EXISTS (409), NOTE_LOCKED (423) or NOTES_FULL (507).`,
      shortDescription: 'Create or replace a note (key, text, overwrite?, locked?).',
      inputSchema: z.object({
        key,
        text: z.string().max(NOTE_MAX_CHARS).describe(`The note's text, at most ${NOTE_MAX_CHARS} characters.`),
        overwrite: z.boolean().default(false).describe('Replace the note if the key exists; otherwise an existing key fails with NOTE_EXISTS.'),
        locked: z.boolean().default(false).describe('Lock the note: replacing or deleting it will then need an escalated call.'),
      }).strict(),
      outputSchema: z.object({
        key: z.string().describe('The note\'s key.'),
        action: z.enum(['create', 'replace']).describe('Whether the note was created or replaced (or would be, in a dry run).'),
        chars: z.number().int().describe('Length of the saved text.'),
        locked: z.boolean().describe('Whether the note is now locked.'),
        updatedAt: z.iso.datetime().optional().describe('When it was saved (absent in a dry run).'),
      }),
      // Replacing a note discards its previous text for good.
      effects: ['irreversible'],
      errors: [NOTE_ERRORS.exists, NOTE_ERRORS.locked, NOTE_ERRORS.full],
      isReadOnly: false,
      isConcurrencySafe: false,
      supportsEscalation: true,
      mutatedResourcesOf: noteResource,
      authorize () {},
      resolve (input, ctx: GatewayContext) {
        const plan = store.planWrite(ownerOf(ctx), input.key, { overwrite: input.overwrite, escalated: ctx.escalated })
        return { key: input.key, action: plan.action, chars: input.text.length, locked: input.locked }
      },
      execute (input, ctx: GatewayContext) {
        const owner = ownerOf(ctx)
        const plan = store.planWrite(owner, input.key, { overwrite: input.overwrite, escalated: ctx.escalated })
        const note: Note = { key: input.key, text: input.text, locked: input.locked, updatedAt: new Date().toISOString() }
        store.put(owner, note)
        return { key: note.key, action: plan.action, chars: note.text.length, locked: note.locked, updatedAt: note.updatedAt }
      },
    }),
    defineTool({
      id: 'notes_delete',
      kind: 'write',
      description: 'Delete one of your notes for good. A locked note can be deleted only by an escalated call. Fails with NOTE_NOT_FOUND (404) or NOTE_LOCKED (423). Use a dry run to see what would be deleted.',
      shortDescription: 'Delete a note permanently (key).',
      inputSchema: keyInput,
      outputSchema: z.object({
        key: z.string().describe('The deleted note\'s key.'),
        deleted: z.literal(true),
        chars: z.number().int().describe('Length of the deleted text.'),
      }),
      effects: ['irreversible'],
      errors: [NOTE_ERRORS.notFound, NOTE_ERRORS.locked],
      isReadOnly: false,
      isConcurrencySafe: false,
      supportsEscalation: true,
      // Offered to models as an intent: "delete my note" resolves to what would go, nothing more.
      asIntent: { description: 'The user wants one of their notes deleted for good.' },
      touchedResourcesOf: noteResource,
      mutatedResourcesOf: noteResource,
      authorize () {},
      resolve (input, ctx: GatewayContext) {
        const note = store.planDelete(ownerOf(ctx), input.key, ctx.escalated)
        return { key: note.key, action: 'delete', chars: note.text.length, locked: note.locked, updatedAt: note.updatedAt }
      },
      execute (input, ctx: GatewayContext) {
        const owner = ownerOf(ctx)
        const note = store.planDelete(owner, input.key, ctx.escalated)
        store.delete(owner, input.key)
        return { key: note.key, deleted: true as const, chars: note.text.length }
      },
    }),
  ]
}

export type { NotesLimits }
export default createNotesTools(servedNotes)
