import fc from 'fast-check'
import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import { boundBreachOf, DEFAULT_INPUT_BOUNDS, type InputBounds } from '../../src/core/input-bounds.js'
import { defineToolCatalog, GatewayError } from '../../src/index.js'

/** The model: depth, widest object and longest array of a JSON value, by plain recursion (fine for test sizes). */
function measure (value: unknown): { depth: number, keys: number, items: number } {
  if (typeof value !== 'object' || value === null) return { depth: 0, keys: 0, items: 0 }
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)
  const inner = children.map(measure)
  return {
    depth: 1 + Math.max(0, ...inner.map(m => m.depth)),
    keys: Math.max(Array.isArray(value) ? 0 : children.length, ...inner.map(m => m.keys)),
    items: Math.max(Array.isArray(value) ? children.length : 0, ...inner.map(m => m.items)),
  }
}

/** The value a JSON pointer names. */
function at (value: unknown, pointer: string): unknown {
  if (pointer === '') return value
  return pointer.slice(1).split('/').map(s => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment], value)
}

function nested (depth: number): unknown {
  let value: unknown = 0
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe('input bounds', () => {
  it('refuses exactly the values past a bound, and points at a value that is past it', () => {
    const bounds = fc.record({ depth: fc.integer({ min: 1, max: 6 }), keys: fc.integer({ min: 1, max: 4 }), items: fc.integer({ min: 1, max: 4 }) })
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), bounds, (value, b: InputBounds) => {
      const m = measure(value)
      const breach = boundBreachOf(value, b)
      expect(breach !== undefined).toBe(m.depth > b.depth || m.keys > b.keys || m.items > b.items)
      if (breach === undefined) return
      const node = at(value, breach.pointer)
      const depthOfPointer = breach.pointer === '' ? 1 : breach.pointer.split('/').length
      if (breach.code === 'too_deep') expect(depthOfPointer).toBe(b.depth + 1)
      if (breach.code === 'too_many_keys') expect(Object.keys(node as object).length).toBeGreaterThan(b.keys)
      if (breach.code === 'too_many_items') expect((node as unknown[]).length).toBeGreaterThan(b.items)
    }), { numRuns: 3_000 })
  })

  it('walks no further than the bound: 200,000 levels and a cycle end at it, without overflowing the stack', () => {
    expect(boundBreachOf(nested(200_000), DEFAULT_INPUT_BOUNDS)?.code).toBe('too_deep')
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(boundBreachOf(cycle, DEFAULT_INPUT_BOUNDS)?.code).toBe('too_deep')
    expect(boundBreachOf(nested(64), DEFAULT_INPUT_BOUNDS)).toBeUndefined()
    expect(boundBreachOf(nested(65), DEFAULT_INPUT_BOUNDS)?.code).toBe('too_deep')
  })

  it('the pipeline refuses a deep input before authorize, and even with an idempotency key nothing recurses past the bound', async () => {
    let authorized = 0
    const catalog = defineToolCatalog([{
      id: 'open', kind: 'write', description: 'Takes anything.', isReadOnly: false, isConcurrencySafe: false,
      inputSchema: z.unknown(), outputSchema: z.null(), authorize () { authorized++ }, execute: () => null,
    }])
    const refusal = await catalog.invokeWith({ app: undefined }, { toolId: 'open', input: nested(5_000), idempotencyKey: 'k' }).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(GatewayError)
    expect((refusal as GatewayError).code).toBe('TOOLGATE_INPUT_TOO_COMPLEX')
    expect(authorized).toBe(0)
    // At the highest bound that may be set, the same call runs through the fingerprint and the tool.
    const deep = defineToolCatalog(catalog.tools, { core: { inputBounds: { depth: 1_000, keys: 10, items: 10 } } })
    await expect(deep.invokeWith({ app: undefined }, { toolId: 'open', input: nested(999), idempotencyKey: 'k' })).resolves.toMatchObject({ value: null })
  })

  it('leaves anything but plain objects and arrays alone (a Buffer, a Date, a class instance are leaves)', () => {
    const bounds = { depth: 2, keys: 2, items: 2 }
    expect(boundBreachOf({ a: Buffer.alloc(100), b: new Date() }, bounds)).toBeUndefined()
    expect(boundBreachOf(new Map([[1, 2], [3, 4], [5, 6]]), bounds)).toBeUndefined()
  })
})
