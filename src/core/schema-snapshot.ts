import { globalRegistry, type z } from 'zod'

type Def = Record<string, unknown>
/** The two internals a copy needs; zod's own types do not expose `def` as a plain record. */
interface Copyable { _zod: { def: object }, clone: (def: Def) => z.ZodType }

function isSchema (value: unknown): value is Copyable {
  return typeof value === 'object' && value !== null && '_zod' in value && typeof (value as Copyable).clone === 'function'
}

/**
 * A deep copy of a zod schema's definition tree, so that mutating the original afterwards
 * (adding a key to `shape`, swapping an option of a union, pushing a check) cannot widen what
 * the copy accepts. Getters in a shape (zod's idiom for recursive schemas) stay getters: they
 * are evaluated lazily by zod and copying them eagerly would recurse forever.
 */
export function snapshotSchema<S extends z.ZodType> (schema: S): S {
  return copySchema(schema as unknown as Copyable, new Map()) as S
}

function copySchema (schema: Copyable, seen: Map<object, unknown>): z.ZodType {
  const done = seen.get(schema)
  if (done !== undefined) return done as z.ZodType
  // zod reads the definition in its constructor, so the copy is built bottom-up; plain-value
  // cycles cannot occur in a definition (recursion goes through getters and z.lazy).
  const def = copyValue(schema._zod.def, seen) as Def
  const copy = schema.clone(def)
  // Descriptions and examples live in zod's registry, keyed by instance: carry them over.
  const meta = globalRegistry.get(schema as unknown as z.ZodType)
  if (meta !== undefined) globalRegistry.add(copy, meta)
  seen.set(schema, copy)
  return copy
}

function copyValue (value: unknown, seen: Map<object, unknown>): unknown {
  if (isSchema(value)) return copySchema(value, seen)
  if (Array.isArray(value)) return value.map(item => copyValue(item, seen))
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value
  const out: Record<string, unknown> = {}
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
    const lazy = lazyShapeOf(descriptor)
    if (lazy !== undefined) {
      // Copied as data: the copy's constructor installs its own lazy accessor over it.
      Object.defineProperty(out, key, { value: copyValue(lazy, seen), writable: true, enumerable: descriptor.enumerable, configurable: true })
      continue
    }
    if ('value' in descriptor) descriptor.value = copyValue(descriptor.value, seen)
    Object.defineProperty(out, key, descriptor)
  }
  return out
}

/**
 * zod keeps an object's `shape` behind an accessor until its first read, the shape itself on
 * the getter's `raw` (zod's `util.rawShape`). Copying that accessor as it is would share the
 * original shape and every schema in it, so mutating them later would widen the copy.
 */
function lazyShapeOf (descriptor: PropertyDescriptor): object | undefined {
  const raw: unknown = (descriptor.get as { raw?: unknown } | undefined)?.raw
  return typeof raw === 'object' && raw !== null ? raw : undefined
}
