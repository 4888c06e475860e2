import type { AttributeValue, Span } from '@opentelemetry/api'

/*
 * The gateway's own attributes on a span. A span of the gateway's tracer (`recorded-span.ts`)
 * takes them unchecked: the keys are the gateway's and every value is of a type it chose (a path
 * a caller sent is still a string), so only the span's limits apply, the value length among them.
 * Any other span checks them as the API has it. (Duck-typed, so that the spans' code loads none
 * of the SDK while tracing is off.)
 *
 * Those the gateway sets on every span it records (a tool's declaration, a call's outcome, a
 * request's route) come as a fixed list of keys, a shape made once, with the values in its order
 * (`OwnAttributes`): the span keeps them as they came rather than one property at a time, and the
 * encoder writes them by position with each key's bytes made once (a declaration's, the same on
 * every call of its tool, once for all). In `npm run bench:tracing`, storing and encoding the
 * attributes one by one was about a third of what a call's two spans cost.
 */

/** A fixed list of attribute keys, distinct, made once for the life of the process. */
export class AttributeShape {
  readonly keys: readonly string[]
  readonly #keys: ReadonlySet<string>
  /** Shapes known to share no key with this one (a span's blocks are checked against each other once per pair of shapes). */
  readonly #apart = new WeakSet<AttributeShape>()

  constructor (keys: readonly string[]) {
    this.#keys = new Set(keys)
    if (this.#keys.size !== keys.length) throw new Error(`an attribute shape names a key twice: ${keys.join(', ')}`)
    this.keys = Object.freeze([...keys])
  }

  has (key: string): boolean {
    return this.#keys.has(key)
  }

  sharesNoKeyWith (other: AttributeShape): boolean {
    if (this.#apart.has(other)) return true
    if (other.keys.some(key => this.#keys.has(key))) return false
    this.#apart.add(other)
    return true
  }
}

/**
 * Attributes of one shape, the values in its keys' order. `fixed`: the same values on every span
 * they are set on (a declaration's), so the encoder writes them once and copies them after.
 */
export interface OwnAttributes {
  readonly shape: AttributeShape
  readonly values: readonly AttributeValue[]
  readonly fixed?: boolean
}

/** A record of the gateway's attributes as one block, fixed: for a declaration's, made once. */
export function fixedAttributes (attributes: Readonly<Record<string, AttributeValue>>): OwnAttributes {
  return Object.freeze({ shape: new AttributeShape(Object.keys(attributes)), values: Object.freeze(Object.values(attributes)), fixed: true })
}

/** A span of the gateway's tracer: it keeps the gateway's attributes as they come. */
interface OwnSpan extends Span {
  setTrusted: (attributes: Readonly<Record<string, AttributeValue>>) => void
  setOwn: (attributes: OwnAttributes) => void
}

export function setOwnAttributes (span: Span, attributes: Readonly<Record<string, AttributeValue>>): void {
  const own = span as Partial<OwnSpan>
  if (own.setTrusted === undefined) span.setAttributes(attributes)
  else own.setTrusted(attributes)
}

/** Attributes of a shape on any span: kept as they are by the gateway's, one by one by another. */
export function setShapedAttributes (span: Span, attributes: OwnAttributes): void {
  const own = span as Partial<OwnSpan>
  if (own.setOwn !== undefined) {
    own.setOwn(attributes)
    return
  }
  const { shape: { keys }, values } = attributes
  for (let i = 0; i < keys.length; i++) span.setAttribute(keys[i]!, values[i]!)
}
