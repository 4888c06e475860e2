import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { buildApp } from '../../plugins/app.js'
import { defineTool, type AnyTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { fixture, linesOf, tempDir, upstreamsFile } from '../upstreams/helpers.js'
import { FUZZ_KEY, FUZZER, loadShippedTools } from './shipped-tools.js'

/*
 * The gateway a fuzzer attacks from outside: the shipped tools, a tool that takes any JSON (with
 * an idempotency key required and an approval rule on it), an MCP server (the fault fixture,
 * its well-behaved tools only, one under a CEL approval rule) and an HTTP service behind an
 * OpenAPI document with an open body. Every run of anything is counted: the local tools'
 * `execute`, the MCP server's calls log, the service's requests. Secrets are planted where an
 * answer could leak them.
 */

export const SECRETS = {
  approverKey: 'approver-key-fuzz-0123456789',
  otherKey: 'other-key-fuzz-0123456789abc',
  serviceKey: 'svc-secret-fuzz-0123456789',
  stateSecret: 'mcp-state-secret-fuzz-0123456789abcdef0123',
} as const

const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'fuzzed service', version: '1' },
  paths: {
    '/things': {
      post: {
        operationId: 'putThing',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } },
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, 405: { description: 'Not this way.' }, 409: { description: 'Taken.' } },
      },
    },
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'q', in: 'query', schema: { type: 'string' } },
          { name: 'X-Tag', in: 'header', schema: { type: 'string' } },
        ],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, 404: { description: 'No such thing.' } },
      },
    },
  },
}

export interface GatewayUnderFuzz {
  readonly app: FastifyInstance
  /** Every run so far: local executes, the MCP server's calls, the service's requests. */
  runs (): number
  close (): Promise<void>
}

export async function gatewayUnderFuzz (): Promise<GatewayUnderFuzz> {
  let local = 0
  const counted = (tools: readonly AnyTool[]): AnyTool[] => tools.map(tool => countedTool(tool, () => { local++ }))
  const service = await recordingService()
  const dir = tempDir('toolgate-fuzz-')
  const document = join(dir, 'service.json')
  writeFileSync(document, JSON.stringify(DOCUMENT))
  const file = upstreamsFile({
    mcpServers: { up: fixture(dir) },
    openapi: { svc: { document, baseUrl: service.url, headers: { 'X-Service-Key': SECRETS.serviceKey } } },
    tools: {
      // The fixture's fault tools (crashes, garbage, hangs) are for the fault tests: hidden here.
      'up_*': { active: false },
      up_record: { active: true, requiresApproval: 'size(input.tag) > 40' },
      up_meta: { active: true, requiresApproval: 'has(input.approve) && input.approve == true' },
      up_total: { active: true },
    },
  })
  const config = loadConfig({}, {
    apiKeys: [
      { ...FUZZER, scopes: [...FUZZER.scopes, 'tools:escalate'] },
      { principal: 'approver', sha256: hashApiKey(SECRETS.approverKey), scopes: ['tools:read', 'tools:approve'] },
      { principal: 'other', sha256: hashApiKey(SECRETS.otherKey), scopes: ['tools:read', 'tools:call'] },
    ],
    upstreamsFile: file,
    approvalRules: [{ tools: ['accept_any'], principal: 'fuzzer', approvers: ['approver'] }],
    mcpStateSecret: SECRETS.stateSecret,
    // A slow CI machine must not answer 503 mid-fuzz: pressure is another test's subject.
    maxEventLoopDelayMs: 0,
    // Forged keys are part of the fuzz: past this throttle they would all be 429, hiding the 401 path.
    authFailureLimit: 0,
    maxResponseBytes: 256 * 1024,
    // A call that asks to wait for its approval waits this long at most (nobody approves here).
    approvalMaxWaitMs: 50,
  })
  const app = await buildApp({ config, tools: counted([...await loadShippedTools(), acceptAny]) })
  await app.ready()
  return {
    app,
    runs: () => local + linesOf(dir, 'calls.log').length + service.seen(),
    close: async () => {
      await app.close()
      await service.close()
    },
  }
}

/** Takes any JSON at all under `value`: the input that reaches every recursive step unchanged. */
const acceptAny = defineTool({
  id: 'accept_any', kind: 'write', description: 'Keeps any JSON value.', isReadOnly: false, isConcurrencySafe: false,
  requiresIdempotencyKey: true, supportsEscalation: true, asIntent: true,
  inputSchema: z.object({ value: z.unknown() }), outputSchema: z.object({ kept: z.boolean() }),
  authorize () {}, execute: () => ({ kept: true }),
})

const DECLARATION_FIELDS = [
  'id', 'kind', 'description', 'shortDescription', 'inputSchema', 'outputSchema', 'effects', 'errors', 'isReadOnly', 'isConcurrencySafe',
  'selfConcurrency', 'timeoutMs', 'asIntent', 'origin', 'authorize', 'parseOutput', 'active', 'resolve', 'debugSteps',
  'touchedResourcesOf', 'mutatedResourcesOf', 'interactive', 'supportsEscalation', 'requiresIdempotencyKey', 'requiresApproval',
] as const

/** The same tool, its every `execute` counted first. */
function countedTool (tool: AnyTool, count: () => void): AnyTool {
  const declaration: Record<string, unknown> = {}
  for (const field of DECLARATION_FIELDS) if (tool[field as keyof AnyTool] !== undefined) declaration[field] = tool[field as keyof AnyTool]
  const execute = tool.execute as (input: unknown, ctx: unknown) => unknown
  return defineTool({ ...declaration, execute: (input: unknown, ctx: unknown) => { count(); return execute(input, ctx) } } as never) as AnyTool
}

/** The HTTP service behind the document: it counts what reaches it and answers as the document says. */
async function recordingService (): Promise<{ url: string, seen: () => number, close: () => Promise<void> }> {
  let seen = 0
  const server: Server = createServer((request, response) => {
    seen++
    request.resume()
    request.on('end', () => {
      const status = request.url?.startsWith('/things/missing') === true ? 404 : 200
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(status === 200 ? { ok: true } : { error: 'no such thing' }))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: () => seen,
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

export { FUZZ_KEY }
