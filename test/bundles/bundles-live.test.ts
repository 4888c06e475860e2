import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { SLOW } from '../slow.js'
import { eventually, fixture, tempDir, upstreamsFile } from '../upstreams/helpers.js'

/*
 * A bundle over a live upstream: a tool the server adds (list_changed) that matches a glob
 * joins the bundle at once, and leaves with it; each call through the bundle is audited with
 * the bundle's name.
 */

const KEY = 'agent-key-0123456789'
const API_KEYS = [{ principal: 'agent', sha256: hashApiKey(KEY), scopes: ['tools:read', 'tools:call'] }]
const apps: FastifyInstance[] = []
afterEach(async () => { await Promise.all(apps.splice(0).map(app => app.close())) })

describe('a bundle follows the live catalog', { timeout: SLOW.PROCESS_MS }, () => {
  it('a tool an upstream adds that matches a glob joins the bundle, and the call is audited with the bundle', async () => {
    const dir = tempDir()
    const audit = join(tempDir(), 'audit.log')
    const file = upstreamsFile({ mcpServers: { up: fixture(dir) }, bundles: { extras: { description: 'The fixture\'s toggle and what it adds.', tools: ['up_t*', 'up_e*'] } } })
    const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file, auditLog: audit }), tools: [] })
    apps.push(app)
    const headers = { 'x-api-key': KEY }
    const listed = async (): Promise<string[]> => (await app.inject({ method: 'GET', url: '/bundles/extras/tools', headers })).json<{ tools: Array<{ id: string }> }>().tools.map(tool => tool.id)
    expect(await listed()).not.toContain('up_extra')
    expect((await app.inject({ method: 'POST', url: '/bundles/extras/tools/up_toggle', payload: {}, headers })).statusCode).toBe(200)
    await eventually(async () => (await listed()).includes('up_extra'), 'the added tool joins the bundle')
    const extra = await app.inject({ method: 'POST', url: '/bundles/extras/tools/up_extra', payload: {}, headers })
    expect(extra.statusCode).toBe(200)
    await app.inject({ method: 'POST', url: '/bundles/extras/tools/up_toggle', payload: {}, headers })
    await eventually(async () => !(await listed()).includes('up_extra'), 'the removed tool leaves the bundle')
    await app.close()
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.event === 'call')
    // The trail records calls that may change something: the read-only `extra` is not among them.
    expect(lines.map(line => [line.tool, line.bundle])).toEqual([['up_toggle', 'extras'], ['up_toggle', 'extras']])
  })
})
