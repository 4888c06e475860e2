import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { CatalogChange } from '../../src/core/catalog.js'
import type { ToolDeclaration } from '../../src/core/tool.js'
import { ToolDefinitionError } from '../../src/core/errors.js'
import { catalogOf, echoDeclaration, writeDeclaration, type LooseDeclaration } from './helpers.js'

/** Loose declarations as a tool file exports them, for `replace`. */
const declared = (declarations: LooseDeclaration[]): ToolDeclaration[] => declarations as unknown as ToolDeclaration[]

const versioned = (version: number, overrides: Record<string, unknown> = {}): Record<string, unknown> => echoDeclaration({
  id: 'versioned',
  description: `Answers version ${version}.`,
  outputSchema: z.object({ version: z.literal(version) }),
  execute: () => ({ version }),
  ...overrides,
})

describe('replacing the tools of a catalog', () => {
  it('new calls get the new declaration, with its stricter input schema', async () => {
    const catalog = catalogOf([echoDeclaration()])
    const tools = catalog.bind({ app: undefined })
    await expect(tools.invoke({ toolId: 'echo', input: { text: 'long text' } })).resolves.toMatchObject({ value: { text: 'long text' } })
    catalog.replace(declared([echoDeclaration({ inputSchema: z.object({ text: z.string().max(3) }) })]))
    // The bound invoker follows the replacement: it was bound before it.
    await expect(tools.invoke({ toolId: 'echo', input: { text: 'long text' } })).rejects.toMatchObject({ status: 400 })
  })

  it('a call already running finishes on the declaration it started with', async () => {
    let release!: () => void
    let begin!: () => void
    const started = new Promise<void>(resolve => { begin = resolve })
    const catalog = catalogOf([versioned(1, { execute: async () => { begin(); await new Promise<void>(r => { release = r }); return { version: 1 } } })])
    const running = catalog.invokeWith({ app: undefined }, { toolId: 'versioned', input: { text: '' } })
    await started
    catalog.replace(declared([versioned(2)]))
    await expect(catalog.invokeWith({ app: undefined }, { toolId: 'versioned', input: { text: '' } })).resolves.toMatchObject({ value: { version: 2 } })
    release()
    // Its output is checked against the old output schema (version 1), not the new one.
    await expect(running).resolves.toMatchObject({ value: { version: 1 } })
  })

  it('a removed tool is unknown to the next call, an added one answers at once', async () => {
    const catalog = catalogOf([echoDeclaration()])
    catalog.replace(declared([versioned(1)]))
    await expect(catalog.invokeWith({ app: undefined }, { toolId: 'echo', input: { text: 'a' } })).rejects.toMatchObject({ status: 404, code: 'TOOLGATE_NOT_FOUND' })
    await expect(catalog.invokeWith({ app: undefined }, { toolId: 'versioned', input: { text: 'a' } })).resolves.toMatchObject({ value: { version: 1 } })
  })

  it('a set with a duplicate id is refused and the serving set stays', () => {
    const catalog = catalogOf([echoDeclaration()])
    const serving = catalog.current
    expect(() => catalog.replace(declared([versioned(1), versioned(2)]))).toThrow(ToolDefinitionError)
    expect(catalog.current).toBe(serving)
    expect(catalog.ids()).toEqual(['echo'])
  })

  it('a bad declaration is refused before anything changes', () => {
    const catalog = catalogOf([echoDeclaration()])
    expect(() => catalog.replace(declared([echoDeclaration({ description: '' })]))).toThrow(/field "description"/)
    expect(catalog.current.version).toBe(1)
  })

  it('listeners hear what was added, changed and removed; an unchanged declaration is not changed', () => {
    const echo = echoDeclaration()
    const catalog = catalogOf([echo, versioned(1)])
    const unchanged = catalog.get('echo')!
    const changes: CatalogChange[] = []
    catalog.onChange(change => { changes.push(change) })
    catalog.replace([unchanged, ...declared([writeDeclaration('added', () => null)])])
    expect(changes).toHaveLength(1)
    expect(changes[0]).toMatchObject({ added: ['added'], changed: [], removed: ['versioned'] })
    expect(changes[0]!.after.version).toBe(2)
    catalog.replace(declared([echoDeclaration(), writeDeclaration('added', () => null)]))
    expect(changes[1]).toMatchObject({ added: [], changed: ['echo', 'added'], removed: [] })
  })

  it('an older set cannot be installed over a newer one', () => {
    const catalog = catalogOf([echoDeclaration()])
    const stale = catalog.prepare(declared([versioned(1)]))
    catalog.replace(declared([versioned(2)]))
    expect(() => catalog.install(stale)).toThrow(RangeError)
    expect(catalog.get('versioned')!.description).toBe('Answers version 2.')
  })

  it('idempotency records outlive a replacement: the same key replays the stored answer', async () => {
    let runs = 0
    const counting = (): Record<string, unknown> => writeDeclaration('count', () => ++runs)
    const catalog = catalogOf([counting()])
    const call = { toolId: 'count', input: {}, idempotencyKey: 'k1' }
    await expect(catalog.invokeWith({ app: undefined }, call)).resolves.toMatchObject({ value: 1, replayed: false })
    catalog.replace(declared([counting()]))
    await expect(catalog.invokeWith({ app: undefined }, call)).resolves.toMatchObject({ value: 1, replayed: true })
    expect(runs).toBe(1)
  })

  it('the scheduler outlives a replacement: an exclusive call still waits for the one before it', async () => {
    const order: string[] = []
    let release!: () => void
    const slow = writeDeclaration('slow', async () => { order.push('slow start'); await new Promise<void>(r => { release = r }); order.push('slow end') })
    const fast = writeDeclaration('fast', () => { order.push('fast') })
    const catalog = catalogOf([slow, fast])
    const first = catalog.invokeWith({ app: undefined, domain: 's' }, { toolId: 'slow', input: {} })
    await new Promise(resolve => setImmediate(resolve))
    catalog.replace(declared([writeDeclaration('slow', () => null), writeDeclaration('fast', () => { order.push('fast') })]))
    const second = catalog.invokeWith({ app: undefined, domain: 's' }, { toolId: 'fast', input: {} })
    await new Promise(resolve => setImmediate(resolve))
    expect(order).toEqual(['slow start'])
    release()
    await Promise.all([first, second])
    expect(order).toEqual(['slow start', 'slow end', 'fast'])
  })

  it('a listener that throws does not undo the swap nor silence the listeners after it', () => {
    const errors: unknown[] = []
    const catalog = catalogOf([echoDeclaration()], { onListenerError: error => { errors.push(error) } })
    const heard: number[] = []
    catalog.onChange(() => { throw new Error('listener failed') })
    catalog.onChange(change => { heard.push(change.after.version) })
    const change = catalog.replace(declared([versioned(1)]))
    expect(change.added).toEqual(['versioned'])
    expect(catalog.ids()).toEqual(['versioned'])
    expect(heard).toEqual([2])
    expect(errors).toHaveLength(1)
  })
})
