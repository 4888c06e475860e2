import { GatewayError } from './errors.js'

/**
 * A question a running call puts to the person at the other end (MCP's elicitation, form
 * mode): a message and the JSON Schema of the answer wanted, a flat object of primitives.
 */
export interface ElicitationRequest {
  readonly message: string
  readonly requestedSchema: Readonly<Record<string, unknown>>
}

/** What the person did: answered (`content`, as the schema asked), declined, or dismissed it. */
export interface ElicitationAnswer {
  readonly action: 'accept' | 'decline' | 'cancel'
  readonly content?: Readonly<Record<string, unknown>>
}

/** How a call asks: the host's listener, and the call's signal (an answer after the call ended is not waited for). */
export type Elicit = (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationAnswer>

const ACTIONS = new Set(['accept', 'decline', 'cancel'])

/**
 * The `ctx.elicit` of one call: checks the question (a malformed one is the tool's bug, a
 * `TypeError`), asks the host, and reads the answer defensively: an answer that is not one, a
 * listener that fails, or a call that ends first all read as `cancel`. The tool never hangs on
 * a person longer than its own timeout.
 */
export function askerFor (listener: Elicit, call: { readonly signal: AbortSignal }): (request: ElicitationRequest) => Promise<ElicitationAnswer> {
  if (typeof listener !== 'function') {
    throw new GatewayError('TOOLGATE_INVALID_INPUT', 'onElicit must be a function', { errors: [{ pointer: '/onElicit', message: 'onElicit must be a function', code: 'invalid_type' }] })
  }
  return async request => {
    if (typeof request !== 'object' || request === null || typeof request.message !== 'string' || typeof request.requestedSchema !== 'object' || request.requestedSchema === null) {
      throw new TypeError('ctx.elicit takes { message, requestedSchema }')
    }
    const aborted = call.signal
    if (aborted.aborted) return CANCELLED
    try {
      const answer = await Promise.race([
        listener({ message: request.message, requestedSchema: request.requestedSchema }, aborted),
        new Promise<ElicitationAnswer>(resolve => { aborted.addEventListener('abort', () => { resolve(CANCELLED) }, { once: true }) }),
      ])
      return answerOf(answer)
    } catch {
      return CANCELLED
    }
  }
}

const CANCELLED: ElicitationAnswer = Object.freeze({ action: 'cancel' })

function answerOf (answer: unknown): ElicitationAnswer {
  if (typeof answer !== 'object' || answer === null) return CANCELLED
  const { action, content } = answer as Record<string, unknown>
  if (typeof action !== 'string' || !ACTIONS.has(action)) return CANCELLED
  if (action !== 'accept') return { action: action as 'decline' | 'cancel' }
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return CANCELLED
  return { action, content: content as Record<string, unknown> }
}
