import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { documentStatuses } from './problem-schemas.js'
import { ERRORS, GatewayError, ToolgateError, UpstreamError, type ErrorCode, type InputIssue } from '../../src/index.js'
import { toolIdOf } from '../tools/call-route.js'
import { isLimitReport, limitHeaders } from '../limits/fields.js'

export const PROBLEM_TYPE = 'application/problem+json'

/** RFC 9457 body. `type` is a URN per code, so clients can switch on it or on `code`. */
export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  code: string
  instance?: string
  [extension: string]: unknown
}

/** Fastify's own error codes, mapped into the catalogue. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'TOOLGATE_MALFORMED_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'TOOLGATE_MALFORMED_REQUEST',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'TOOLGATE_MALFORMED_REQUEST',
  FST_ERR_CTP_BODY_TOO_LARGE: 'TOOLGATE_PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'TOOLGATE_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'TOOLGATE_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_VALIDATION: 'TOOLGATE_INVALID_INPUT',
}
/** Extensions that are headers, not body members. */
const HEADER_EXTENSIONS = new Set(['wwwAuthenticate', 'retryAfter', 'allow', 'reason'])

/** Turn any failure into a `ToolgateError` from the catalogue or the tool's own family. */
function toToolgateError (error: unknown): ToolgateError {
  if (error instanceof ToolgateError) return error
  const fastifyError = error as Partial<FastifyError> & { body?: unknown }
  const code = fastifyError.code === undefined ? undefined : FASTIFY_CODES[fastifyError.code]
  if (code === 'TOOLGATE_INVALID_INPUT') return new GatewayError(code, safeFastifyDetail(code, fastifyError), { errors: validationIssues(fastifyError) })
  if (code !== undefined) return new GatewayError(code, safeFastifyDetail(code, fastifyError))
  // JSON.parse's prototype-poisoning guard (secure-json-parse) throws a SyntaxError of its own.
  if (error instanceof SyntaxError) return new GatewayError('TOOLGATE_MALFORMED_REQUEST', error.message)
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new GatewayError('TOOLGATE_MALFORMED_REQUEST', fastifyError.message ?? 'bad request')
  }
  return new GatewayError('TOOLGATE_INTERNAL', undefined, {}, { cause: error })
}

/**
 * Fastify's validation failures as `errors` entries: a pointer into the body that was sent (as
 * a tool call's input issues point into its body), or into `/query`, `/params`, `/headers`.
 */
function validationIssues (error: Partial<FastifyError>): InputIssue[] {
  const context = error.validationContext
  const part = context === 'body' ? '' : `/${context === 'querystring' ? 'query' : context ?? ''}`
  // As for a tool call's input: the object that holds an unexpected property is pointed at ('' for the body itself).
  return (error.validation ?? []).map(issue => ({
    pointer: `${part}${issue.instancePath === '/' ? '' : issue.instancePath}`,
    message: issue.message ?? 'invalid value',
    code: issue.keyword,
  }))
}

function safeFastifyDetail (code: ErrorCode, error: Partial<FastifyError>): string {
  if (code === 'TOOLGATE_PAYLOAD_TOO_LARGE') return 'the request body is larger than the configured limit'
  if (code === 'TOOLGATE_UNSUPPORTED_MEDIA_TYPE') return 'tool calls take Content-Type: application/json'
  return error.message ?? ERRORS[code].title
}

/** Codes whose message may name internals: the caller gets a generic detail, the log the real one. */
const GENERIC_DETAIL = new Set<string>(['TOOLGATE_INTERNAL', 'TOOLGATE_TOOL_BAD_DEFINITION'])

/**
 * Every 5xx of the gateway itself gets a fixed detail: its message may name internals (a heap
 * figure, a queue, a limit, a tool's thrown message) that are for the log, not the caller.
 * A tool's own ToolError keeps the message its author wrote for the caller, and so does an
 * upstream's failure (an `isError` text, bounded; which upstream is down): written for the
 * caller, with every configured secret taken out.
 */
function genericDetail (error: ToolgateError): boolean {
  return GENERIC_DETAIL.has(error.code) || (error.family === 'gateway' && error.status >= 500 && !(error instanceof UpstreamError))
}

function body500Title (error: ToolgateError): string {
  return ERRORS[error.code as ErrorCode].title
}

/** Render the problem body; 5xx details are generic, the real one goes to the log. */
export function problemOf (error: ToolgateError, requestId: string): ProblemBody {
  const status = error.status
  const body: ProblemBody = {
    type: `urn:toolgate:error:${error.code}`,
    title: error instanceof GatewayError ? error.title : 'Tool error',
    status,
    detail: genericDetail(error) ? `${body500Title(error)}; the gateway log has the details under request ${requestId}` : error.message,
    code: error.code,
    instance: `urn:toolgate:request:${requestId}`,
  }
  for (const [key, value] of Object.entries(error.extensions)) {
    if (!HEADER_EXTENSIONS.has(key) && !(key in body)) body[key] = value
  }
  // Every 400 carries `errors`, as documented; one without a finer pointer names the whole request.
  if (status === 400 && body.errors === undefined) body.errors = [{ pointer: '', message: body.detail, code: error.code.toLowerCase() }]
  return body
}

/** What any route may answer besides its own statuses (see the onRoute hook below). */
export const ANY_ROUTE_STATUSES: readonly number[] = [400, 405, 500]

export interface ProblemOptions {
  /**
   * Told of a tool route's failure that never reached the pipeline (authentication, rate
   * limit, transport errors): the pipeline's own failures are counted from its record. An
   * error-path callback rather than an onResponse hook, which would cost every call.
   */
  readonly onToolRouteFailure?: (toolId: string, error: ToolgateError, request: FastifyRequest, reply: FastifyReply) => void
  /** More parameters for a bearer challenge (RFC 9728 `resource_metadata`, when JWT is on). */
  readonly challengeParams?: (request: FastifyRequest) => string
}

function sendProblem (reply: FastifyReply, request: FastifyRequest, failure: unknown, options: ProblemOptions = {}): FastifyReply {
  const error = toToolgateError(failure)
  const toolId = toolIdOf(request)
  if (toolId !== undefined && request.callRecord === null) options.onToolRouteFailure?.(toolId, error, request, reply)
  const { extensions } = error
  if (typeof extensions.wwwAuthenticate === 'string') {
    const more = options.challengeParams?.(request)
    void reply.header('WWW-Authenticate', more === undefined ? extensions.wwwAuthenticate : `${extensions.wwwAuthenticate}, ${more}`)
  }
  if (typeof extensions.retryAfter === 'number') void reply.header('Retry-After', String(extensions.retryAfter))
  if (error.code === 'TOOLGATE_LIMIT_EXCEEDED' && isLimitReport(extensions.limit)) limitHeaders(reply, [extensions.limit])
  if (typeof extensions.allow === 'string') void reply.header('Allow', extensions.allow)
  if (error instanceof ToolgateError && error.replayed) void reply.header('Idempotent-Replayed', 'true')
  // A call the pipeline saw has logged its own line, with the tool and outcome: one line per failure.
  if (error.status >= 500 && request.callRecord === null) request.log.error({ err: error.cause ?? failure, code: error.code }, error.message)
  return reply.code(error.status).type(PROBLEM_TYPE).send(problemOf(error, request.id))
}

/**
 * The one error handler: every failure, Fastify's own included, leaves as problem+json, and
 * unknown routes are 404 (or 405 with `Allow` when the path exists under another method).
 */
/**
 * Fastify's `frameworkErrors`: a path it cannot decode (`/tools/%ff`) or a path parameter past
 * the router's limit is a malformed request, answered as problem+json like everything else.
 */
export function frameworkError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('x-request-id', request.id)
  const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is too long' : 'the path is not valid (a malformed percent-encoding?)'
  sendProblem(reply, request, new GatewayError('TOOLGATE_MALFORMED_REQUEST', message, { errors: [{ pointer: '/path', message, code: 'invalid_path' }] }))
}

export const problemPlugin = fp(async function problem (app: FastifyInstance, options: ProblemOptions) {
  app.setErrorHandler(function onError (error, request, reply) {
    return sendProblem(reply, request, error, options)
  })
  // Which methods a path has, to tell 405 from 404: our own router fed by every route added.
  const routes = FindMyWay()
  app.addHook('onRoute', route => {
    // Any route may answer 400 (a malformed request, credentials in the query) and 500; its
    // path answers 405 with `Allow` to a method it lacks, which OpenAPI can only say on the
    // operations the path has.
    documentStatuses(route as { schema?: Record<string, unknown> }, ANY_ROUTE_STATUSES)
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD' && routes.find(method as HTTPMethod, route.url) === null) routes.on(method as HTTPMethod, route.url, () => {})
    }
  })
  app.setNotFoundHandler(function onNotFound (request, reply) {
    const allowed = allowedMethods(routes, request.url)
    if (allowed.length > 0) {
      return sendProblem(reply, request, new GatewayError('TOOLGATE_METHOD_NOT_ALLOWED', `${request.method} is not allowed here`, { allow: allowed.join(', ') }))
    }
    return sendProblem(reply, request, new GatewayError('TOOLGATE_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`))
  })
}, { name: 'toolgate-problem' })

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

function allowedMethods (routes: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>, url: string): string[] {
  const path = url.split('?')[0]!
  const allowed: string[] = METHODS.filter(method => routes.find(method, path) !== null)
  if (allowed.includes('GET')) allowed.push('HEAD')
  return allowed
}
