import type { FastifyInstance, FastifySchemaCompiler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES, type GatewayFacts } from '../../src/core/app-context.js'
import { requireScope } from '../../src/services/auth/index.js'
import { GatewayError, type InputIssue } from '../../src/index.js'
import type { GatewayCalls } from '../../src/services/calls/gateway-calls.js'
import type { CallTracer } from '../observability/tracing.js'
import { intentEntryOf, intentSchemaOf, intentToolsOf } from '../../src/services/intents.js'
import { httpCallOptions, optionsValidator } from './call-options.js'
import { disconnectSignalOf } from '../http/disconnect.js'
import { gatewayAppOf, permitFor } from './gateway-app.js'
import { CallHeaders, CallQuery } from './call-schemas.js'
import { problemResponses } from '../http/problem-schemas.js'

export interface IntentOptions {
  /** Where every call enters the pipeline and is finished, as over REST (its catalog is the one served). */
  readonly calls: GatewayCalls
  readonly facts: GatewayFacts
  /** Opens each call's span when tracing is on. */
  readonly traceCall?: CallTracer
}

const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }]
const IntentList = z.object({
  intents: z.array(z.object({ intent: z.string(), description: z.string(), effects: z.array(z.string()), readOnly: z.boolean() })),
  schema: z.record(z.string(), z.unknown()).describe('JSON Schema a model fills to pick one intent: anyOf { intent, input }'),
}).meta({ id: 'IntentList' })
const ResolveBody = z.object({ intent: z.string().max(64), input: z.unknown() }).meta({ id: 'IntentChoice' })
const Resolved = z.object({ intent: z.string(), proposal: z.unknown().describe('What the call would do: the tool\'s resolve(input), or the validated input') }).meta({ id: 'IntentProposal' })

/**
 * `GET /intents` and `POST /intents/resolve`: the tools declared `asIntent`, for a model that
 * picks an intent in structured output. Resolving is the pipeline's dry run (rules, `active`,
 * validation, mode gates, `authorize`, then `resolve`): nothing executes.
 */
export async function intentRoutes (parent: FastifyInstance, options: IntentOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { calls, facts, traceCall } = options
  const { catalog } = calls
  const timeout = catalog.options.defaultTimeoutMs

  app.get('/intents', {
    schema: {
      operationId: 'listIntents', tags: ['gateway'], summary: 'List the intents you may pick',
      description: 'The tools declared with `asIntent` that this caller may call, and one JSON Schema for a model\'s structured output choosing among them.',
      security: SECURITY, response: { 200: IntentList, ...problemResponses([401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const visible = intentToolsOf(catalog.active(gatewayAppOf(request, facts))).filter(tool => app.isPermitted(request.principal.id, tool.id))
    return { intents: visible.map(intentEntryOf), schema: intentSchemaOf(visible, timeout) }
  })

  app.post('/intents/resolve', {
    schema: {
      operationId: 'resolveIntent', tags: ['gateway'], summary: 'Validate and authorize an intent; execute nothing',
      description: 'Takes `{ intent, input }` as a model produced it, runs the tool\'s pipeline as a dry run and answers its proposal.',
      security: SECURITY, querystring: CallQuery, headers: CallHeaders, body: ResolveBody, response: { 200: Resolved, ...problemResponses([400, 401, 403, 404, 413, 415, 422]) },
    },
    validatorCompiler: optionsValidator(false) as FastifySchemaCompiler<unknown>,
  }, async (request, reply) => {
    const { principal } = request
    requireScope(principal, SCOPES.call)
    const { intent, input } = request.body
    const tool = catalog.get(intent)
    // A tool that is not an intent is not one here, whatever else it is: the same 404 as an unknown name.
    if (tool?.asIntent === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', `no intent "${intent}"`)
    // The same options as a REST call's; resolving is always its dry run.
    const options = httpCallOptions(request)
    if (options.dryRun === false) throw new GatewayError('TOOLGATE_INVALID_INPUT', 'an intent resolves as a dry run only', { errors: [{ pointer: '/query/dryRun', message: 'dryRun=false: an intent resolves as a dry run only; call the tool to run it', code: 'conflicting_option' }] })
    const { value } = await inputIssuesUnder('/input', () => calls.call({
      app: gatewayAppOf(request, facts),
      source: request.ip,
      transport: 'intents',
      signal: disconnectSignalOf(reply),
      isPermitted: permitFor(app, principal.id),
      trace: traceCall === undefined ? undefined : traced => traceCall(traced, request),
    }, { ...options, toolId: intent, input, dryRun: true }))
    return { intent, proposal: value }
  })
}

/** The pipeline's input issues point into the tool's input; the body sent here holds it under `pointer`. */
async function inputIssuesUnder<T> (pointer: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (!(error instanceof GatewayError) || error.code !== 'TOOLGATE_INVALID_INPUT') throw error
    const issues = error.extensions.errors
    if (!Array.isArray(issues)) throw error
    throw new GatewayError(error.code, error.message, { ...error.extensions, errors: (issues as InputIssue[]).map(issue => ({ ...issue, pointer: pointer + issue.pointer })) }, { cause: error })
  }
}
