import { readdir } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { defineToolCatalog, EFFECTS, type AnyTool } from '../../src/index.js'
import { isDefinedTool } from '../../src/core/tool.js'
import { jsonSchemaOf } from '../../src/services/tool-listing.js'

const TOOLS_DIR = join(import.meta.dirname, '../../tools')

/** What the loader does with TOOLS_DIR: import every top-level module, take its default export. */
async function loadShipped (): Promise<Array<{ file: string, tools: AnyTool[] }>> {
  const files = (await readdir(TOOLS_DIR, { withFileTypes: true }))
    .filter(entry => entry.isFile() && ['.ts', '.js'].includes(extname(entry.name)))
    .map(entry => entry.name).sort()
  return Promise.all(files.map(async file => {
    const exported = (await import(pathToFileURL(join(TOOLS_DIR, file)).href) as { default?: unknown }).default
    return { file, tools: (Array.isArray(exported) ? exported : [exported]) as AnyTool[] }
  }))
}

const modules = await loadShipped()
const tools = modules.flatMap(m => m.tools)
const byId = new Map(tools.map(t => [t.id, t]))

describe('the shipped tools folder', () => {
  it('holds only tool modules at the top level, each exporting defined tools', () => {
    expect(modules.map(m => m.file)).toEqual(['gateway-status.ts', 'ledger.ts', 'notes.ts', 'text-stats.ts', 'time-now.ts', 'url-fetch.ts'])
    for (const { tools: exported } of modules) {
      expect(exported.length).toBeGreaterThan(0)
      for (const tool of exported) expect(isDefinedTool(tool)).toBe(true)
    }
  })

  it('makes one catalog with unique ids', () => {
    const catalog = defineToolCatalog(tools)
    expect(catalog.ids()).toEqual([
      'gateway_status', 'ledger_balance', 'ledger_transfer',
      'notes_list', 'notes_read', 'notes_write', 'notes_delete', 'text_stats', 'time_now', 'url_fetch',
    ])
  })

  it('uses every effect', () => {
    expect(new Set(tools.flatMap(t => t.effects))).toEqual(new Set(EFFECTS))
  })

  it('uses every declaration field somewhere', () => {
    const some = (test: (t: AnyTool) => boolean): string[] => tools.filter(test).map(t => t.id)
    expect(some(t => t.isReadOnly)).not.toEqual([])
    expect(some(t => !t.isReadOnly)).not.toEqual([])
    expect(some(t => t.isReadOnly && t.isConcurrencySafe)).not.toEqual([])
    expect(some(t => t.selfConcurrency !== undefined)).toEqual(['url_fetch'])
    // Waiting on a person is the gateway's approvals now, not a tool that blocks (the demo approval tools are gone).
    expect(some(t => t.interactive === true)).toEqual([])
    expect(some(t => t.timeoutMs === Infinity)).toEqual([])
    expect(some(t => t.requiresApproval !== false)).toEqual(['ledger_transfer'])
    expect(some(t => t.timeoutMs !== undefined && Number.isFinite(t.timeoutMs))).not.toEqual([])
    expect(some(t => t.supportsEscalation === true)).toEqual(['notes_write', 'notes_delete'])
    expect(some(t => t.requiresIdempotencyKey === true)).toEqual(['ledger_transfer'])
    expect(some(t => t.active !== undefined)).toEqual([])
    expect(some(t => t.resolve !== undefined)).toEqual(['ledger_transfer', 'notes_write', 'notes_delete'])
    expect(some(t => t.debugSteps !== undefined)).toEqual(['ledger_transfer', 'url_fetch'])
    expect(some(t => t.touchedResourcesOf !== undefined).length).toBeGreaterThan(0)
    expect(some(t => t.mutatedResourcesOf !== undefined)).toEqual(['ledger_transfer', 'notes_write', 'notes_delete'])
  })

  it('gives every tool a short description and describes every input field (they reach the OpenAPI document)', () => {
    for (const tool of tools) {
      expect(tool.shortDescription, tool.id).toMatch(/\S/)
      const schema = jsonSchemaOf(tool.inputSchema, 'input') as { properties?: Record<string, { description?: string }> }
      for (const [name, property] of Object.entries(schema.properties ?? {})) expect(property.description, `${tool.id}.${name}`).toMatch(/\S/)
    }
  })

  it('keeps mutating tools\' resource lists empty on malformed input', () => {
    for (const tool of tools) {
      for (const of of [tool.touchedResourcesOf, tool.mutatedResourcesOf]) {
        if (of === undefined) continue
        for (const bad of [undefined, null, 42, 'x', {}, { key: 1, from: 2 }]) expect(of(bad), tool.id).toEqual([])
      }
    }
    expect(byId.get('notes_delete')!.mutatedResourcesOf!({ key: 'k' })).toEqual(['note:k'])
  })
})
