import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { vi } from 'vitest'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import type { AnyTool } from '../../src/index.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { isTimeZone } from '../../tools/time-now.js'

export const FUZZ_KEY = 'fuzz-key-0123456789abcdef'
export const FUZZER = {
  principal: 'fuzzer',
  sha256: hashApiKey(FUZZ_KEY),
  scopes: ['tools:read', 'tools:call', 'ledger:transfer', 'ledger:transfer:large'],
}

/**
 * The shipped tools as the server loads them. The environment is pinned first, because the
 * modules read it when imported: no FETCH_ALLOWED_HOSTS, so url_fetch refuses every URL in
 * `authorize`, before any DNS lookup or connection (the fuzzer must never reach the network);
 * no REDIS_URL, so the demo ledger lives in this process's memory.
 */
export async function loadShippedTools (): Promise<AnyTool[]> {
  vi.stubEnv('FETCH_ALLOWED_HOSTS', '')
  vi.stubEnv('REDIS_URL', '')
  return await loadToolsFromDir(fileURLToPath(new URL('../../tools', import.meta.url)))
}

export interface ToolFuzz {
  /** Values mixed in per property (JSON pointer), so the success paths run too. */
  readonly hints?: Readonly<Record<string, fc.Arbitrary<unknown>>>
  /** The 5xx failures the tool declares (its description names them); any other 5xx is a defect. */
  readonly declared5xx?: readonly string[]
  /**
   * Inputs the published JSON Schema accepts but a zod refinement refuses (JSON Schema cannot
   * express it): only these may get 400 although they were generated from the schema.
   */
  readonly refinedAway?: (input: Record<string, unknown>) => boolean
}

const accounts = fc.constantFrom('alice', 'bob', 'carol')
const noteKeys = fc.constantFrom('todo', 'projects/toolgate', 'a.b-c_d')

export const FUZZ: Readonly<Record<string, ToolFuzz>> = {
  // `timeZone` is refined with Intl: a random string of 1 to 64 characters is rarely a zone.
  time_now: {
    hints: { '/timeZone': fc.constantFrom('UTC', ...Intl.supportedValuesOf('timeZone')) },
    refinedAway: input => typeof input.timeZone === 'string' && !isTimeZone(input.timeZone),
  },
  ledger_balance: { hints: { '/account': accounts } },
  // `from` and `to` must differ: a refinement across two properties.
  ledger_transfer: { hints: { '/from': accounts, '/to': accounts, '/amount': fc.integer({ min: 1, max: 2_000 }) }, refinedAway: input => input.from === input.to },
  notes_read: { hints: { '/key': noteKeys } },
  notes_write: { hints: { '/key': noteKeys }, declared5xx: ['NOTES_FULL'] },
  notes_delete: { hints: { '/key': noteKeys } },
  // JSON Schema says `format: uri`; zod also wants http(s) and no credentials. The generator
  // only makes http(s) URLs without credentials, so this allowance should never be used.
  url_fetch: {
    declared5xx: ['FETCH_FAILED', 'HOST_UNRESOLVED'],
    refinedAway: input => typeof input.url === 'string' && (!/^https?:/i.test(input.url) || /^https?:\/\/[^/?#]*@/i.test(input.url)),
  },
}

/**
 * POST one body to a tool. `ledger_transfer` requires an Idempotency-Key, a fresh one each call. A body that
 * JSON cannot carry (`undefined`) goes out empty.
 */
export async function callTool (app: FastifyInstance, toolId: string, body: unknown): Promise<LightMyRequestResponse> {
  return await sendText(app, toolId, JSON.stringify(body) ?? '')
}

/** POST this exact text as an `application/json` body (see {@link callTool}). */
export async function sendText (app: FastifyInstance, toolId: string, text: string): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: `/tools/${toolId}`,
    headers: {
      'x-api-key': FUZZ_KEY,
      'content-type': 'application/json',
      ...(toolId === 'ledger_transfer' ? { 'idempotency-key': randomUUID() } : {}),
    },
    payload: text,
  })
}
