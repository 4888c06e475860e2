import type { FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { validatorCompiler } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { readCallOptions, type CallOptionName, type CallOptions, type FoundOption } from '../../src/core/call-options.js'
import { GatewayError } from '../../src/index.js'

/*
 * Where HTTP carries a call's options: `mode`, `dryRun` and `escalate` in the query;
 * `Idempotency-Key`, `Approval-Id` and `Prefer: wait=N` in the headers. The REST route, the
 * intents route and `POST /mcp` all read them here and parse them with the core's one
 * definition (`readCallOptions`).
 */

const QUERY_OPTIONS: Readonly<Record<string, CallOptionName>> = { mode: 'mode', dryRun: 'dryRun', escalate: 'escalate' }
const HEADER_OPTIONS: Readonly<Record<string, CallOptionName>> = { 'idempotency-key': 'idempotencyKey', 'approval-id': 'approvalId' }
const HEADER_LABELS: Readonly<Record<string, string>> = { 'idempotency-key': 'Idempotency-Key', 'approval-id': 'Approval-Id' }
const NONE: CallOptions = Object.freeze({})

const passThrough = (data: unknown): { value: unknown } => ({ value: data })
const headersAsSent = (): boolean => true

/**
 * The validator of a route that takes a call's options: the query and headers stay as sent,
 * for `httpCallOptions` to read (their schemas document them); the body is left raw for the
 * pipeline to validate (`rawBody`), or validated by its schema. Headers are read by name where
 * they are used: validating the whole header object would cost every call microseconds.
 */
export function optionsValidator (rawBody: boolean): FastifySchemaCompiler<z.ZodType> {
  return routeSchema => {
    if (routeSchema.httpPart === 'querystring' || (rawBody && routeSchema.httpPart === 'body')) return passThrough
    // No `value` for headers: Fastify would then replace request.headers with a copy, and every
    // later read of it would copy all headers again.
    if (routeSchema.httpPart === 'headers') return headersAsSent
    return validatorCompiler(routeSchema)
  }
}

/** The call options of an HTTP request, parsed: a 400 for any that is malformed, unknown or given twice. */
export function httpCallOptions (request: FastifyRequest): CallOptions {
  const { headers } = request
  if (!hasQuery(request.query) && headers['idempotency-key'] === undefined && headers['approval-id'] === undefined && headers.prefer === undefined) return NONE
  return readCallOptions(httpOptionsFound(request))
}

/** What an HTTP request carries of a call's options, as found (unparsed); a query parameter that is no option is refused. */
export function httpOptionsFound (request: FastifyRequest): FoundOption[] {
  const found: FoundOption[] = []
  const query = (request.query ?? {}) as Record<string, unknown>
  const unknown: string[] = []
  for (const name of Object.keys(query)) {
    const option = Object.hasOwn(QUERY_OPTIONS, name) ? QUERY_OPTIONS[name] : undefined
    if (option === undefined) unknown.push(name)
    else found.push({ name: option, form: 'text', raw: query[name], pointer: `/query/${escape(name)}`, label: name })
  }
  if (unknown.length > 0) throw unknownQuery(unknown)
  for (const header of Object.keys(HEADER_OPTIONS)) {
    const raw = request.headers[header]
    if (raw !== undefined) found.push({ name: HEADER_OPTIONS[header]!, form: 'text', raw, pointer: `/headers/${header}`, label: HEADER_LABELS[header] })
  }
  const wait = preferredWait(request.headers.prefer)
  if (wait !== undefined) found.push({ name: 'waitForApprovalMs', form: 'text', raw: wait, pointer: '/headers/prefer', label: 'Prefer: wait' })
  return found
}

/**
 * RFC 7240's `wait` preference, as text (`undefined`: not asked for). Only the first counts, as
 * the RFC says of a preference given twice; `wait` without a value is returned empty, to be refused.
 */
function preferredWait (prefer: string | string[] | undefined): string | undefined {
  if (prefer === undefined) return undefined
  for (const header of [prefer].flat()) {
    for (const preference of header.split(',')) {
      const match = /^\s*wait\s*(?:=\s*(?:"([^"]*)"|([^;\s]*)))?\s*(?:;.*)?$/i.exec(preference)
      if (match !== null) return match[1] ?? match[2] ?? ''
    }
  }
  return undefined
}

function unknownQuery (names: readonly string[]): GatewayError {
  const known = Object.keys(QUERY_OPTIONS)
  const errors = names.map(name => {
    const meant = known.find(option => normalized(option) === normalized(name))
    return { pointer: `/query/${escape(name)}`, message: meant === undefined ? `${name} is not an option of a call (${known.join(', ')})` : `${name} is not an option of a call: did you mean ${meant}?`, code: 'unknown_option' }
  })
  return new GatewayError('TOOLGATE_INVALID_INPUT', `unknown query parameter${names.length === 1 ? '' : 's'}: ${names.join(', ')}`, { errors })
}

function normalized (name: string): string {
  return name.toLowerCase().replace(/[-_.\s]/g, '')
}

function hasQuery (query: unknown): boolean {
  for (const _ in query as object) return true
  return false
}

function escape (name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1')
}
