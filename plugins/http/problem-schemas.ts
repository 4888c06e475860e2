import { z } from 'zod'

/** RFC 9457 problem details, as every error of the gateway is sent. */
export const ProblemSchema = z.looseObject({
  type: z.string().describe('A URN naming the error: urn:toolgate:error:<code>'),
  title: z.string(),
  status: z.number().int().describe('Equal to the HTTP status'),
  detail: z.string(),
  code: z.string().describe('Stable machine code: TOOLGATE_* for the gateway, the tool\'s own code for a ToolError'),
  instance: z.string().optional(),
  errors: z.array(z.object({ pointer: z.string(), message: z.string(), code: z.string() })).optional()
    .describe('For 400: every input issue, with a JSON pointer into the request body'),
  outcome: z.literal('unknown').optional()
    .describe('The call may or may not have taken effect: check state before retrying'),
}).meta({ id: 'Problem', description: 'An RFC 9457 problem (application/problem+json)' })

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: invalid input or options', 401: 'Authentication required', 403: 'Forbidden',
  404: 'Not found or not active for this caller', 405: 'This path does not take that method (see Allow)', 408: 'The request took too long to arrive', 409: 'Conflict', 410: 'Gone: the approval expired', 413: 'Body too large', 415: 'Unsupported media type',
  422: 'Rejected', 431: 'Request headers too large', 429: 'Too many requests (see Retry-After)', 499: 'Cancelled by the caller',
  500: 'Internal error or tool failure', 502: 'The tool returned invalid output', 503: 'Unavailable (see Retry-After)',
  504: 'The tool timed out',
}

/** The generic text of a problem status, as every operation describes it. */
export function statusText (status: number): string {
  return STATUS_TEXT[status] ?? 'Error'
}

/** Response objects made here, shared by every route that uses them (the OpenAPI transform converts each once). */
export const SHARED_PROBLEMS = new WeakSet<object>()
const madeProblems = new Map<number, ProblemResponse>()

interface ProblemResponse { description: string, content: Record<string, { schema: typeof ProblemSchema }> }

/** Every status the gateway's catalogue can produce, as problem+json responses for the OpenAPI document. */
export function problemResponses (statuses: readonly number[]): Record<number, { description: string, content: Record<string, { schema: typeof ProblemSchema }> }> {
  const responses: Record<number, ProblemResponse> = {}
  for (const status of statuses) {
    let response = madeProblems.get(status)
    if (response === undefined) {
      response = { description: statusText(status), content: { 'application/problem+json': { schema: ProblemSchema } } }
      madeProblems.set(status, response)
      SHARED_PROBLEMS.add(response)
    }
    responses[status] = response
  }
  return responses
}

/**
 * Add problem responses for `statuses` to a documented route that lacks them: for failures
 * that a whole scope can answer (a hook, not the handler), so every operation in it says so.
 */
export function documentStatuses (route: { schema?: Record<string, unknown> }, statuses: readonly number[]): void {
  const schema = route.schema
  if (schema === undefined || schema.hide === true) return
  const response = (schema.response ?? {}) as Record<string, unknown>
  const missing = statuses.filter(status => response[status] === undefined && response[String(status)] === undefined)
  if (missing.length > 0) schema.response = { ...response, ...problemResponses(missing) }
}
