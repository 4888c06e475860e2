import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { testApp } from '../http/helpers.js'
import { expectProblem } from '../http/problem-shape.js'
import { arbitraryFromSchema, type JsonSchema } from './arbitrary-from-schema.js'
import { brokenFromSchema } from './broken-from-schema.js'
import { callTool, FUZZ, FUZZ_KEY, FUZZER, loadShippedTools, sendText } from './shipped-tools.js'

/*
 * Fuzzing over HTTP, from each shipped tool's published input schema (GET /tools/{id}):
 * inputs the schema accepts, inputs with one thing broken, and anything at all.
 */

const tools = await loadShippedTools()
afterAll(() => { vi.unstubAllEnvs() })

const RUNS = { numRuns: 100 }

/** The gateway with every shipped tool; event-loop pressure off, so a slow CI machine cannot answer 503 mid-fuzz. */
async function fuzzApp (): Promise<FastifyInstance> {
  return await testApp({ apiKeys: [FUZZER], maxEventLoopDelayMs: 0 }, tools)
}

async function publishedSchema (app: FastifyInstance, toolId: string): Promise<JsonSchema> {
  const response = await app.inject({ method: 'GET', url: `/tools/${toolId}`, headers: { 'x-api-key': FUZZ_KEY } })
  expect(response.statusCode).toBe(200)
  return response.json<{ inputSchema: JsonSchema }>().inputSchema
}

const isSuccess = (response: LightMyRequestResponse): boolean => response.statusCode >= 200 && response.statusCode < 300

describe('the fuzzer cannot reach the network', () => {
  it('with FETCH_ALLOWED_HOSTS unset, url_fetch refuses a valid public URL with 403 HOST_NOT_ALLOWED', async () => {
    const app = await fuzzApp()
    expectProblem(await callTool(app, 'url_fetch', { url: 'https://example.com/' }), 403, 'HOST_NOT_ALLOWED')
  })
})

describe.each(tools.map(tool => [tool.id]))('fuzzing %s over HTTP', toolId => {
  const fuzz = FUZZ[toolId] ?? {}
  const refinedAway = fuzz.refinedAway ?? (() => false)

  /** Bodies as sent: valid, broken, any value at all, and any text (mostly not JSON), for the properties that hold for every input. */
  const anyBody = (schema: JsonSchema): fc.Arbitrary<string> => {
    const valid = arbitraryFromSchema(schema, fuzz)
    const values = fc.oneof(valid, brokenFromSchema(schema, valid).map(broken => broken.value), fc.anything())
    return fc.oneof({ arbitrary: values.map(value => JSON.stringify(value) ?? ''), weight: 3 }, { arbitrary: fc.string({ unit: 'binary', maxLength: 64 }), weight: 1 })
  }

  it('inputs its published schema accepts are never refused as invalid (400)', async () => {
    const app = await fuzzApp()
    const schema = await publishedSchema(app, toolId)
    await fc.assert(fc.asyncProperty(arbitraryFromSchema(schema, fuzz), async input => {
      const response = await callTool(app, toolId, input)
      const refused = response.statusCode === 400
      if (refused && refinedAway(input as Record<string, unknown>) && response.json<{ code?: string }>().code === 'TOOLGATE_INVALID_INPUT') return
      expect(response.statusCode, response.body).not.toBe(400)
    }), RUNS)
  })

  it('inputs with one thing broken against its schema are 400 TOOLGATE_INVALID_INPUT', async () => {
    const app = await fuzzApp()
    const schema = await publishedSchema(app, toolId)
    const valid = arbitraryFromSchema(schema, fuzz)
    await fc.assert(fc.asyncProperty(brokenFromSchema(schema, valid), async broken => {
      const response = await callTool(app, toolId, broken.value)
      expect({ how: broken.how, status: response.statusCode, code: response.json<{ code?: string }>().code })
        .toEqual({ how: broken.how, status: 400, code: 'TOOLGATE_INVALID_INPUT' })
    }), RUNS)
  })

  it('no input gets a 5xx other than the tool\'s declared failures', async () => {
    const app = await fuzzApp()
    const schema = await publishedSchema(app, toolId)
    await fc.assert(fc.asyncProperty(anyBody(schema), async body => {
      const response = await sendText(app, toolId, body)
      if (response.statusCode < 500) return
      const problem = response.json<{ code?: string }>()
      expect(fuzz.declared5xx ?? [], `${response.statusCode} ${response.body}`).toContain(problem.code)
    }), RUNS)
  })

  it('every non-2xx answer is problem+json whose status equals the HTTP status', async () => {
    const app = await fuzzApp()
    const schema = await publishedSchema(app, toolId)
    await fc.assert(fc.asyncProperty(anyBody(schema), async body => {
      const response = await sendText(app, toolId, body)
      if (!isSuccess(response)) expectProblem(response, response.statusCode)
    }), RUNS)
  })
})
