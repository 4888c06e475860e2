import { describe, expect, it } from 'vitest'
import { defineToolCatalog } from '../../src/core/catalog.js'
import { defineTool } from '../../src/core/define-tool.js'
import { ToolDefinitionError } from '../../src/core/errors.js'
import { isDefinedTool, type ToolDeclaration } from '../../src/core/tool.js'
import { catalogOf, echoDeclaration, rejectionOf, type LooseDeclaration } from './helpers.js'

const named = (id: string, overrides: LooseDeclaration = {}): LooseDeclaration => echoDeclaration({ id, ...overrides })

describe('a catalog', () => {
  it('rejects a duplicate id, naming it', () => {
    expect(() => catalogOf([named('alpha'), named('beta'), named('alpha')])).toThrow(ToolDefinitionError)
    expect(() => catalogOf([named('alpha'), named('alpha')])).toThrow(/tool "alpha".*field "id" is declared twice/)
  })

  it('names the file of the first declaration in a duplicate error', () => {
    const first = defineTool(named('alpha') as unknown as ToolDeclaration, { source: 'tools/a.ts' })
    const second = defineTool(named('alpha') as unknown as ToolDeclaration, { source: 'tools/b.ts' })
    expect(() => defineToolCatalog([first, second])).toThrow(/tools\/b\.ts.*first in tools\/a\.ts/)
  })

  it('keeps declaration order in ids() and tools', () => {
    const catalog = catalogOf([named('zeta'), named('alpha'), named('mid')])
    expect(catalog.ids()).toEqual(['zeta', 'alpha', 'mid'])
    expect(catalog.tools.map(tool => tool.id)).toEqual(['zeta', 'alpha', 'mid'])
  })

  it('looks a tool up by id, and answers undefined for an unknown one', () => {
    const catalog = catalogOf([named('alpha'), named('beta')])
    expect(catalog.get('beta')?.id).toBe('beta')
    expect(catalog.get('gamma')).toBeUndefined()
  })

  it('defines plain declaration objects', () => {
    const catalog = catalogOf([named('alpha')])
    expect(isDefinedTool(catalog.get('alpha'))).toBe(true)
    expect(Object.isFrozen(catalog.get('alpha'))).toBe(true)
  })

  it('validates plain declaration objects as defineTool does', () => {
    expect(() => catalogOf([named('alpha', { description: '' })])).toThrow(/tool "alpha".*field "description"/)
  })

  it('keeps an already-defined tool as it is', () => {
    const tool = defineTool(named('alpha') as unknown as ToolDeclaration)
    expect(defineToolCatalog([tool]).get('alpha')).toBe(tool)
  })

  it('mixes defined tools and plain declarations, in order', () => {
    const tool = defineTool(named('alpha') as unknown as ToolDeclaration)
    const catalog = defineToolCatalog([named('beta') as unknown as ToolDeclaration, tool])
    expect(catalog.ids()).toEqual(['beta', 'alpha'])
  })

  it('freezes its tool list', () => {
    expect(Object.isFrozen(catalogOf([named('alpha')]).tools)).toBe(true)
  })
})

describe('active(app)', () => {
  const catalog = catalogOf([
    named('always'),
    named('admins', { active: (app: { admin: boolean }) => app.admin }),
    named('truthy', { active: () => 1 }),
    named('broken', { active: () => { throw new Error('defect') } }),
    named('later'),
  ])

  it('lists only the tools active for the app, in declaration order', () => {
    expect(catalog.active({ admin: true }).map(tool => tool.id)).toEqual(['always', 'admins', 'later'])
    expect(catalog.active({ admin: false }).map(tool => tool.id)).toEqual(['always', 'later'])
  })

  it('treats a truthy non-boolean from active as inactive', () => {
    expect(catalog.active({ admin: true }).map(tool => tool.id)).not.toContain('truthy')
  })

  it('treats an active that throws as inactive', () => {
    expect(catalog.active({ admin: true }).map(tool => tool.id)).not.toContain('broken')
  })

  it('still lists inactive tools in ids(), which is the whole catalog', () => {
    expect(catalog.ids()).toEqual(['always', 'admins', 'truthy', 'broken', 'later'])
  })
})

describe('finding the tool of a call', () => {
  it('answers TOOLGATE_NOT_FOUND (404) for an unknown tool', async () => {
    const error = await rejectionOf(catalogOf([named('alpha')]).bind({ app: undefined }).invoke({ toolId: 'nope', input: {} }))
    expect([error.code, error.status]).toEqual(['TOOLGATE_NOT_FOUND', 404])
  })

  it('answers an inactive tool exactly as an unknown one', async () => {
    const catalog = catalogOf([named('hidden', { active: () => false })])
    const invoker = catalog.bind({ app: undefined })
    const inactive = await rejectionOf(invoker.invoke({ toolId: 'hidden', input: { text: 'a' } }))
    const unknown = await rejectionOf(invoker.invoke({ toolId: 'nope', input: { text: 'a' } }))
    expect([inactive.code, inactive.status]).toEqual(['TOOLGATE_NOT_FOUND', 404])
    expect(inactive.message.replace('hidden', 'X')).toBe(unknown.message.replace('nope', 'X'))
  })

  it('runs a tool whose active says yes for the bound app', async () => {
    const catalog = catalogOf([named('admins', { active: (app: { admin: boolean }) => app.admin })])
    const { value } = await catalog.bind({ app: { admin: true } }).invoke({ toolId: 'admins', input: { text: 'a' } })
    expect(value).toEqual({ text: 'a' })
  })

  it('refuses with TOOLGATE_FORBIDDEN (403) when isPermitted says no, before execute', async () => {
    let runs = 0
    const catalog = catalogOf([named('alpha', { execute: (input: unknown) => { runs++; return input } })])
    const invoker = catalog.bind({ app: undefined, isPermitted: tool => tool.id !== 'alpha' })
    const error = await rejectionOf(invoker.invoke({ toolId: 'alpha', input: { text: 'a' } }))
    expect([error.code, error.status, runs]).toEqual(['TOOLGATE_FORBIDDEN', 403, 0])
  })

  it('runs the tool when isPermitted says yes', async () => {
    const invoker = catalogOf([named('alpha')]).bind({ app: undefined, isPermitted: () => true })
    await expect(invoker.invoke({ toolId: 'alpha', input: { text: 'a' } })).resolves.toMatchObject({ value: { text: 'a' } })
  })
})
