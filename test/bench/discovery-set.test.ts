import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DISCOVERY_TASKS, mcpToolsList, startDiscoveryCatalog, type DiscoveryCatalog, type DiscoveryTask } from '../../bench/discovery/catalog.js'
import { SLOW } from '../slow.js'

/*
 * The evaluation set of tool discovery (bench/discovery): a catalog of about 500 real tools and
 * 50 tasks, each naming the one tool meant to serve it. Checked here so that neither drifts
 * from the other as the gateway or the packages change.
 */

const tasks = JSON.parse(readFileSync(DISCOVERY_TASKS, 'utf8')) as DiscoveryTask[]
let catalog: DiscoveryCatalog

beforeAll(async () => {
  catalog = await startDiscoveryCatalog()
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await catalog?.close()
})

describe('the discovery evaluation set', { timeout: SLOW.PROCESS_MS }, () => {
  it('is a catalog of 450 to 550 tools, from the shipped tools, each MCP server and the OpenAPI services', () => {
    const ids = catalog.tools.map(tool => tool.id)
    expect(ids.length).toBeGreaterThanOrEqual(450)
    expect(ids.length).toBeLessThanOrEqual(550)
    expect(new Set(ids).size).toBe(ids.length)
    for (const prefix of ['notes_', 'everything_', 'filesystem_', 'memory_', 'petstore_', 'startrek_', 'readme_', 'train_travel_']) {
      expect(ids.some(id => id.startsWith(prefix)), prefix).toBe(true)
    }
  })

  it('has 50 distinct tasks, each naming a tool of the catalog', () => {
    expect(tasks).toHaveLength(50)
    expect(new Set(tasks.map(task => task.task.trim().toLowerCase())).size).toBe(50)
    const ids = new Set(catalog.tools.map(tool => tool.id))
    expect(tasks.filter(task => !ids.has(task.tool))).toEqual([])
    for (const task of tasks) expect(Object.keys(task).sort()).toEqual(['task', 'tool'])
  })

  it('lists the same tools over MCP', async () => {
    const listing = await mcpToolsList(catalog.app)
    expect(listing.tools.map(tool => tool.name).sort()).toEqual(catalog.tools.map(tool => tool.id).sort())
    expect(listing.bytes).toBeGreaterThan(0)
  })
})
