import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/core/define-tool.js'
import { isDefinedTool, type ToolDeclaration } from '../../src/core/tool.js'
import { catalogOf, echoDeclaration, type LooseDeclaration } from './helpers.js'

function define (declaration: LooseDeclaration) {
  return defineTool(declaration as unknown as ToolDeclaration)
}

describe('defineTool returns a frozen, detached copy', () => {
  it('returns a frozen tool that cannot be reassigned', () => {
    const tool = define(echoDeclaration())
    expect(Object.isFrozen(tool)).toBe(true)
    expect(() => { (tool as { execute: unknown }).execute = () => ({ text: 'hijacked' }) }).toThrow(TypeError)
  })

  it('freezes the effects list', () => {
    const tool = define(echoDeclaration({ effects: ['external'] }))
    expect(Object.isFrozen(tool.effects)).toBe(true)
  })

  it('marks the result as a defined tool, and a plain declaration as not', () => {
    const declaration = echoDeclaration()
    expect([isDefinedTool(define(declaration)), isDefinedTool(declaration)]).toEqual([true, false])
  })

  it('sorts and dedupes effects and joins them into the label', () => {
    const tool = define(echoDeclaration({ effects: ['irreversible', 'external', 'financial', 'external'] }))
    expect(tool.effects).toEqual(['external', 'financial', 'irreversible'])
    expect(tool.effectsLabel).toBe('external,financial,irreversible')
  })

  it("labels a tool without effects 'none'", () => {
    const tool = define(echoDeclaration())
    expect(tool.effects).toEqual([])
    expect(tool.effectsLabel).toBe('none')
  })

  it("labels an empty effects list 'none' too", () => {
    expect(define(echoDeclaration({ effects: [] })).effectsLabel).toBe('none')
  })

  it('does not share the effects array with the declaration', () => {
    const effects = ['external']
    const tool = define(echoDeclaration({ effects }))
    effects.push('financial')
    expect(tool.effects).toEqual(['external'])
  })
})

describe('handlers are bound to the declaration', () => {
  it('runs execute and authorize with `this` the original declaration object', async () => {
    const seen: unknown[] = []
    const declaration: LooseDeclaration = echoDeclaration({
      authorize (this: unknown) { seen.push(this) },
      execute (this: unknown, input: { text: string }) { seen.push(this); return input },
    })
    await catalogOf([declaration]).bind({ app: undefined }).invoke({ toolId: 'echo', input: { text: 'a' } })
    expect(seen).toHaveLength(2)
    expect(seen[0]).toBe(declaration)
    expect(seen[1]).toBe(declaration)
  })

  it('keeps `this` the declaration even when the tool method is called on another object', () => {
    const declaration: LooseDeclaration = echoDeclaration({ resolve (this: unknown) { return this } })
    const tool = define(declaration)
    expect(tool.resolve!.call({ other: true }, { text: 'a' }, undefined as never)).toBe(declaration)
  })
})

describe('mutating the declaration after defineTool changes nothing', () => {
  it('ignores a reassigned execute', async () => {
    const declaration = echoDeclaration()
    const catalog = catalogOf([declaration])
    declaration.execute = () => ({ text: 'hijacked' })
    const { value } = await catalog.bind({ app: undefined }).invoke({ toolId: 'echo', input: { text: 'a' } })
    expect(value).toEqual({ text: 'a' })
  })

  it('ignores a reassigned authorize', async () => {
    const declaration = echoDeclaration()
    const catalog = catalogOf([declaration])
    declaration.authorize = () => { throw new Error('now denied') }
    await expect(catalog.bind({ app: undefined }).invoke({ toolId: 'echo', input: { text: 'a' } })).resolves.toBeDefined()
  })

  it('ignores a reassigned inputSchema', () => {
    const declaration = echoDeclaration({ inputSchema: z.strictObject({ text: z.string() }) })
    const tool = define(declaration)
    declaration.inputSchema = z.any()
    expect((tool.inputSchema as z.ZodType).safeParse({ text: 1 }).success).toBe(false)
  })

  it('ignores flipped flags and a changed id', () => {
    const declaration = echoDeclaration({ isReadOnly: false })
    const tool = define(declaration)
    declaration.isReadOnly = true
    declaration.id = 'other'
    expect([tool.isReadOnly, tool.id]).toEqual([false, 'echo'])
  })

  it('ignores a changed timeoutMs', () => {
    const declaration = echoDeclaration({ timeoutMs: 100 })
    const tool = define(declaration)
    declaration.timeoutMs = Infinity
    expect(tool.timeoutMs).toBe(100)
  })
})
