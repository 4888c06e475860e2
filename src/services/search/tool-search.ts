import MiniSearch, { type SearchOptions as EngineOptions } from 'minisearch'
import type { NamedTool } from '../../core/bundles/named-tool.js'
import { documentOf, FIELD_BOOSTS, FIELDS, type ToolDocument } from './fields.js'
import { STOP_WORDS, wordsOf } from './words.js'

interface SearchHit {
  readonly named: NamedTool
  /** The engine's relevance (BM25 over the weighted fields); higher is better. */
  readonly score: number
}

interface SearchOptions {
  /** At most this many hits. */
  readonly limit: number
  /** Whether this caller may see the tool; a tool it may not is never a hit. */
  readonly visible: (named: NamedTool) => boolean
}

/** Full-text search over one endpoint's tools. */
export interface ToolSearch {
  /**
   * The visible tools the query's words best describe, best first, ties by name: the same
   * query over the same tools gives the same hits. `query` is checked already (`queryOf`).
   */
  search (query: string, options: SearchOptions): readonly SearchHit[]
}

/**
 * How the engine matches a query word: a word of 3 letters or more also finds the words it
 * begins ("calend" finds "calendar"), one of 5 or more also finds a misspelling of it, up to
 * 2 edits. Both bounded, so a long or odd word costs no more than a short walk of the index.
 */
const MATCHING: EngineOptions = {
  boost: FIELD_BOOSTS,
  prefix: term => term.length >= 3,
  fuzzy: term => (term.length >= 5 ? 0.2 : false),
  maxFuzzy: 2,
  combineWith: 'OR',
}

/** Every word of the text but the stop words, lower-cased (index and query alike). */
function termsOf (text: string): string[] {
  return wordsOf(text).filter(word => !STOP_WORDS.has(word))
}

const searches = new WeakMap<readonly NamedTool[], ToolSearch>()

/**
 * The search over `entries`, made once per array: an endpoint passes the same array while its
 * tools do not change, so the index is built once per catalog version (on the first search).
 * `defaultTimeoutMs`: the gateway's, with which the tools' listings (and parameters) are read.
 */
export function toolSearchOf (entries: readonly NamedTool[], defaultTimeoutMs: number): ToolSearch {
  let search = searches.get(entries)
  if (search === undefined) {
    search = new IndexedSearch(entries, defaultTimeoutMs)
    searches.set(entries, search)
  }
  return search
}

class IndexedSearch implements ToolSearch {
  #index: MiniSearch<ToolDocument> | undefined

  constructor (readonly entries: readonly NamedTool[], readonly defaultTimeoutMs: number) {}

  search (query: string, { limit, visible }: SearchOptions): readonly SearchHit[] {
    const { entries } = this
    // A word said twice is walked once: sixteen copies of a long word cost what one does.
    const terms = [...new Set(termsOf(query))]
    // Filtered inside the engine, before any cut: a caller still gets `limit` visible hits.
    const found = this.#indexed().search(terms.join(' '), { filter: result => visible(entries[result.id as number]!) })
    const hits = found.map(result => ({ named: entries[result.id as number]!, score: result.score }))
    return hits.sort(byScoreThenName).slice(0, limit)
  }

  #indexed (): MiniSearch<ToolDocument> {
    if (this.#index === undefined) {
      const index = new MiniSearch<ToolDocument>({ fields: FIELDS, tokenize: termsOf, processTerm: term => term, searchOptions: MATCHING })
      index.addAll(this.entries.map((named, id) => documentOf(named, id, this.defaultTimeoutMs)))
      this.#index = index
    }
    return this.#index
  }
}

function byScoreThenName (a: SearchHit, b: SearchHit): number {
  return b.score - a.score || (a.named.name < b.named.name ? -1 : a.named.name > b.named.name ? 1 : 0)
}
