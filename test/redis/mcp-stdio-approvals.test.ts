/**
 * `toolgate mcp` (stdio) holds the operator's approval rules too. With REDIS_URL its approvals
 * live where an HTTP gateway's approvers see them: a desktop host's 2026-07-28 client waits
 * (retrying with its `requestState`) until a person approves on the gateway, then completes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const prefix = testPrefix()
const dir = mkdtempSync(join(tmpdir(), 'toolgate-stdio-approvals-'))
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await cleanPrefix(prefix)
})

describe.skipIf(!HAVE_REDIS)('toolgate mcp with approvals in Redis', { timeout: SLOW.PROCESS_MS }, () => {
  it('a ruled call waits for a person deciding on the HTTP gateway, then runs once', async () => {
    const configFile = join(dir, 'config.json')
    writeFileSync(configFile, JSON.stringify({ approvalRules: [{ tools: ['echo'] }] }))
    const gateway = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, redisUrl: REDIS_URL, redisPrefix: prefix }), tools: [] })
    const client = new Client({ name: 'desktop-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/mcp-stdio-tools'],
      cwd: root,
      stderr: 'pipe',
      env: { PATH: process.env.PATH ?? '', REDIS_URL, REDIS_PREFIX: prefix, CONFIG_FILE: configFile, MCP_APPROVAL_WAIT_MS: '1000', LOG_LEVEL: 'warn' },
    }))
    try {
      const called = client.callTool({ name: 'echo', arguments: { text: 'needs a yes' } })
      let pending: Array<{ id: string, tool: string, requestedBy: string }> = []
      while (pending.length === 0) {
        await new Promise(resolve => setTimeout(resolve, 50))
        pending = (await gateway.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } })).json().approvals
      }
      expect(pending[0]).toMatchObject({ tool: 'echo', requestedBy: 'stdio' })
      const decided = await gateway.inject({ method: 'POST', url: `/approvals/${pending[0]!.id}/approve`, headers: { 'x-api-key': KEYS.bob } })
      expect(decided.statusCode).toBe(200)
      expect((await called).structuredContent).toEqual({ text: 'needs a yes', length: 11 })
      const record = (await gateway.inject({ method: 'GET', url: `/approvals/${pending[0]!.id}`, headers: { 'x-api-key': KEYS.bob } })).json()
      expect(record).toMatchObject({ status: 'consumed', decidedBy: 'bob' })
    } finally {
      await client.close()
      await gateway.close()
    }
  })
})
