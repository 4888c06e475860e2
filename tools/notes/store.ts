import { ToolError } from 'toolgate'

/** One stored note. Notes are private to their owner (the calling principal's id). */
export interface Note {
  readonly key: string
  readonly text: string
  /** A locked note can be replaced or deleted only by an escalated call. */
  readonly locked: boolean
  readonly updatedAt: string
}

export interface NotesLimits {
  /** Notes one principal may hold. */
  readonly maxNotesPerOwner: number
  /** Notes all principals together may hold: bounds the memory of the whole store. */
  readonly maxNotesTotal: number
}

/** The failures the store throws, as the notes tools declare them (`errors`): each tool lists those it can reach. */
export const NOTE_ERRORS = {
  notFound: { status: 404, code: 'NOTE_NOT_FOUND', description: 'You hold no note with this key; `notes_list` shows your keys.' },
  exists: { status: 409, code: 'NOTE_EXISTS', description: 'A note with this key exists; send `overwrite: true` to replace it.' },
  locked: { status: 423, code: 'NOTE_LOCKED', description: 'The note is locked; only an escalated call (`escalate=true`, approved by a person) may replace or delete it.' },
  full: { status: 507, code: 'NOTES_FULL', description: 'You hold as many notes as you may, or the store is full; delete some first.' },
} as const

const DEFAULT_NOTES_LIMITS: NotesLimits = { maxNotesPerOwner: 100, maxNotesTotal: 10_000 }

/** What a write would do, computed without doing it (shared by `execute` and the dry run). */
export interface WritePlan {
  readonly action: 'create' | 'replace'
  readonly previous?: Note
}

/**
 * An in-memory, bounded notes store. Every method is synchronous so that a dry run
 * (`resolve`, synchronous by contract) sees exactly what `execute` would.
 */
export class MemoryNotesStore {
  readonly limits: NotesLimits
  readonly #owners = new Map<string, Map<string, Note>>()
  #total = 0

  constructor (limits: Partial<NotesLimits> = {}) {
    this.limits = { ...DEFAULT_NOTES_LIMITS, ...limits }
  }

  list (owner: string, prefix = ''): Note[] {
    const notes = [...(this.#owners.get(owner)?.values() ?? [])]
    return notes.filter(note => note.key.startsWith(prefix)).sort((a, b) => a.key.localeCompare(b.key))
  }

  count (owner: string): number {
    return this.#owners.get(owner)?.size ?? 0
  }

  get (owner: string, key: string): Note | undefined {
    return this.#owners.get(owner)?.get(key)
  }

  /** The note, or a 404 `NOTE_NOT_FOUND`. */
  require (owner: string, key: string): Note {
    const note = this.get(owner, key)
    if (note === undefined) throw new ToolError(404, 'NOTE_NOT_FOUND', `there is no note "${key}"`)
    return note
  }

  /** Check a write against the store's rules and limits; throws the error the write would fail with. */
  planWrite (owner: string, key: string, options: { overwrite: boolean, escalated: boolean }): WritePlan {
    const previous = this.get(owner, key)
    if (previous === undefined) {
      if (this.count(owner) >= this.limits.maxNotesPerOwner) {
        throw new ToolError(507, 'NOTES_FULL', `you already hold ${this.limits.maxNotesPerOwner} notes, the limit; delete some first`)
      }
      if (this.#total >= this.limits.maxNotesTotal) {
        throw new ToolError(507, 'NOTES_FULL', 'the notes store is full; delete some notes first')
      }
      return { action: 'create' }
    }
    if (!options.overwrite) throw new ToolError(409, 'NOTE_EXISTS', `a note "${key}" already exists; pass overwrite: true to replace it`)
    checkUnlocked(previous, options.escalated, 'replace')
    return { action: 'replace', previous }
  }

  put (owner: string, note: Note): void {
    let notes = this.#owners.get(owner)
    if (notes === undefined) this.#owners.set(owner, notes = new Map<string, Note>())
    if (!notes.has(note.key)) this.#total++
    notes.set(note.key, note)
  }

  /** Check a delete; throws the error the delete would fail with. */
  planDelete (owner: string, key: string, escalated: boolean): Note {
    const note = this.require(owner, key)
    checkUnlocked(note, escalated, 'delete')
    return note
  }

  delete (owner: string, key: string): void {
    const notes = this.#owners.get(owner)
    if (notes?.delete(key) !== true) return
    this.#total--
    if (notes.size === 0) this.#owners.delete(owner)
  }
}

function checkUnlocked (note: Note, escalated: boolean, action: string): void {
  if (note.locked && !escalated) {
    throw new ToolError(423, 'NOTE_LOCKED', `note "${note.key}" is locked; only an escalated call may ${action} it`)
  }
}

/**
 * The notes of the served notes tools, one store per process: here, in a helper, so that a
 * reload of `notes.ts` keeps them (a reload that changes a helper starts them afresh).
 */
export const servedNotes = new MemoryNotesStore()
