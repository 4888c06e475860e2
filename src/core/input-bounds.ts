import { GatewayError, type InputIssue } from './errors.js'
import { toJsonPointer } from './input-issues.js'

/**
 * How deep and how wide an input may be. Every step after the bound (schemas, the idempotency
 * fingerprint, approval rules, an upstream's encoder) walks the input; past the bound, a body
 * well inside the size limit can overflow the stack or multiply the work, so it is refused
 * before any of them runs.
 */
export interface InputBounds {
  /** Levels of objects and arrays inside each other (a top-level `{}` is 1). */
  readonly depth: number
  /** Members of one object. */
  readonly keys: number
  /** Items of one array. */
  readonly items: number
}

export const DEFAULT_INPUT_BOUNDS: InputBounds = Object.freeze({ depth: 64, keys: 10_000, items: 100_000 })
/** The highest depth bound that may be set: every walk of an input below it stays far from the stack's end. */
export const MAX_DEPTH_BOUND = 1_000

/**
 * Where `value` first passes `bounds`, or undefined when it keeps to them. Only plain objects
 * and arrays (what JSON makes) are walked; anything else is a leaf. The walk recurses at most
 * `bounds.depth + 1` frames, so a cycle or a value of any depth ends at the bound.
 */
export function boundBreachOf (value: unknown, bounds: InputBounds): InputIssue | undefined {
  if (!isWalked(value)) return undefined
  const path: PropertyKey[] = []
  const breach = walk(value, 1, bounds, path)
  if (breach === undefined) return undefined
  return { pointer: toJsonPointer(path), message: breach.message, code: breach.code }
}

/** `boundBreachOf` as the pipeline's refusal: a 400 that names the bound and where it was passed. */
export function checkInputBounds (value: unknown, bounds: InputBounds): void {
  const breach = boundBreachOf(value, bounds)
  if (breach !== undefined) throw inputTooComplex(breach, 'the input')
}

/** The refusal of a breach: `what` passed it (the input, the body), `setting` names the bound where the host has one. */
export function inputTooComplex (breach: InputIssue, what: string, setting?: (bound: keyof InputBounds) => string): GatewayError {
  const bound = BOUND_OF[breach.code]
  const named = setting === undefined || bound === undefined ? '' : ` (${setting(bound)})`
  return new GatewayError('TOOLGATE_INPUT_TOO_COMPLEX', `${what} ${breach.message}${named}`, { errors: [breach] })
}

const BOUND_OF: Readonly<Record<string, keyof InputBounds>> = { too_deep: 'depth', too_many_keys: 'keys', too_many_items: 'items' }

interface Breach { readonly message: string, readonly code: string }

/** What passed the bound, with `path` left pointing at the value that passed it. */
function walk (value: object, depth: number, bounds: InputBounds, path: PropertyKey[]): Breach | undefined {
  if (depth > bounds.depth) return { message: `nests deeper than ${bounds.depth} levels`, code: 'too_deep' }
  if (Array.isArray(value)) {
    if (value.length > bounds.items) return { message: `holds an array of more than ${bounds.items} items`, code: 'too_many_items' }
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (!isWalked(item)) continue
      path.push(i)
      const breach = walk(item, depth + 1, bounds, path)
      if (breach !== undefined) return breach
      path.pop()
    }
    return undefined
  }
  let count = 0
  for (const key in value) {
    if (++count > bounds.keys) return { message: `holds an object of more than ${bounds.keys} keys`, code: 'too_many_keys' }
    const member: unknown = (value as Record<string, unknown>)[key]
    if (!isWalked(member)) continue
    path.push(key)
    const breach = walk(member, depth + 1, bounds, path)
    if (breach !== undefined) return breach
    path.pop()
  }
  return undefined
}

function isWalked (value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return true
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
