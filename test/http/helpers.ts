import { afterEach } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig, type ConfigSchema } from '../../src/services/config.js'
import type { AnyTool } from '../../src/index.js'
import type { z } from 'zod'
import { httpTools, runs } from '../fixtures/http-tools.js'

const open: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map(app => app.close()))
  runs.clear()
})

export const KEYS = { admin: 'admin-key-0123456789', reader: 'reader-key-0123456789', caller: 'caller-key-0123456789' } as const

/** The API keys every authenticated test app knows: digests only, as in production. */
export const API_KEYS = [
  { principal: 'admin', sha256: hashApiKey(KEYS.admin), scopes: ['tools:read', 'tools:call', 'tools:escalate'] },
  { principal: 'reader', sha256: hashApiKey(KEYS.reader), scopes: ['tools:read'] },
  { principal: 'caller', sha256: hashApiKey(KEYS.caller), scopes: ['tools:read', 'tools:call'] },
]

/** Build the real app (closed after the test) with the HTTP fixture tools and config overrides. */
export async function testApp (overrides: Partial<z.input<typeof ConfigSchema>> = {}, tools: readonly AnyTool[] = httpTools): Promise<FastifyInstance> {
  const config = loadConfig({}, { apiKeys: API_KEYS, ...overrides })
  const app = await buildApp({ config, tools })
  open.push(app)
  return app
}

export function auth (key: string): Record<string, string> {
  return { 'x-api-key': key }
}
