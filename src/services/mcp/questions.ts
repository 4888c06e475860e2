import type { Elicit, ElicitationAnswer, ElicitationRequest } from '../../core/elicitation.js'
import { guarded } from '../../core/approvals/approvals.js'
import { newId } from '../../core/ids.js'
import type { InvokeResult } from '../../core/types.js'
import { refused } from './approval-continuation.js'
import { takesFormElicitation } from './client-requests.js'
import { META } from './modern.js'
import type { QuestionState, RequestStateSeal } from './request-state.js'

/*
 * MCP 2026-07-28 has no request from server to client: a call that needs the person's answer
 * answers `input_required` with the question, and the client retries with its answer and the
 * `requestState` it was given. A call that asks (a tool's `ctx.elicit`, an upstream server's
 * elicitation) keeps running in this process, parked on its question; the state names it
 * (sealed, for this caller and tool), and the retry hands it the answer and waits for what it
 * does next: its result, or another question. The call's own timeout still bounds it: a call
 * that ends while parked is gone, and a retry says so.
 */

/** How long a question's state is good for; the call's own timeout ends it sooner. */
export const QUESTION_TTL_MS = 15 * 60_000
/** The key of the one question in `inputRequests`. */
const KEY = 'question'
/** Most calls parked at once in one process; past it a question is declined. */
const MAX_PARKED = 1_000
const CANCEL: ElicitationAnswer = Object.freeze({ action: 'cancel' })
const DECLINE: ElicitationAnswer = Object.freeze({ action: 'decline' })

/** What a round of a call ends with: its result (a promise, which may reject), or the `input_required` answer JSON. */
export type Round = { readonly result: Promise<InvokeResult> } | { readonly inputRequired: string }

/** One running call that may ask its caller, one question at a time. */
class AskingCall {
  readonly result: Promise<InvokeResult>
  #asked: { readonly question: ElicitationRequest, readonly answer: (answer: ElicitationAnswer) => void } | undefined
  #settled = false
  #wake: (() => void) | undefined

  constructor (run: (elicit: Elicit) => Promise<InvokeResult>) {
    this.result = run(this.#elicit)
    const settle = (): void => {
      this.#settled = true
      this.#wake?.()
    }
    this.result.then(settle, settle)
  }

  /** The call's `ctx.elicit`: a second question while one waits is declined (one at a time). */
  readonly #elicit: Elicit = async (question, signal) => {
    if (this.#asked !== undefined) return DECLINE
    return await new Promise<ElicitationAnswer>(resolve => {
      const answer = (given: ElicitationAnswer): void => {
        if (this.#asked?.answer !== answer) return
        this.#asked = undefined
        resolve(given)
      }
      this.#asked = { question, answer }
      signal.addEventListener('abort', () => { answer(CANCEL) }, { once: true })
      this.#wake?.()
    })
  }

  /** Until the call settles (undefined) or asks (its question). */
  async next (): Promise<AskingCall['asked']> {
    while (this.#asked === undefined && !this.#settled) await new Promise<void>(resolve => { this.#wake = resolve })
    this.#wake = undefined
    return this.#settled ? undefined : this.#asked
  }

  get asked (): { readonly question: ElicitationRequest, readonly answer: (answer: ElicitationAnswer) => void } | undefined {
    return this.#asked
  }
}

interface Parked {
  readonly call: AskingCall
  readonly principal: string
  readonly tool: string
}

export class CallQuestions {
  readonly #seal: () => Promise<RequestStateSeal>
  readonly #ttlMs: number
  readonly #parked = new Map<string, Parked>()

  /** `ttlMs`: how long a question's state is good for (the call's timeout ends it sooner). */
  constructor (seal: () => Promise<RequestStateSeal>, ttlMs: number) {
    this.#seal = seal
    this.#ttlMs = ttlMs
  }

  /** Whether a 2026-07-28 request's envelope says its client can answer a form question. */
  static canAsk (meta: unknown): boolean {
    if (typeof meta !== 'object' || meta === null) return false
    return takesFormElicitation((meta as Record<string, unknown>)[META.clientCapabilities])
  }

  /** The first round of a call that may ask: `run` starts it with the `ctx.elicit` to give it. */
  async start (principal: string, tool: string, run: (elicit: Elicit) => Promise<InvokeResult>): Promise<Round> {
    return await this.#round(new AskingCall(run), principal, tool)
  }

  /** A retry with a question's state: its answer goes to the parked call, then the next round. */
  async resume (state: QuestionState, inputResponses: unknown): Promise<Round> {
    const parked = this.#parked.get(state.question)
    if (parked === undefined) throw refused('the call that asked is no longer waiting (it ended, timed out, or runs in another process); call the tool again')
    const asked = parked.call.asked
    this.#parked.delete(state.question)
    asked?.answer(answerOf(inputResponses))
    return await this.#round(parked.call, parked.principal, parked.tool)
  }

  async #round (call: AskingCall, principal: string, tool: string): Promise<Round> {
    const asked = await call.next()
    if (asked === undefined) return { result: call.result }
    if (this.#parked.size >= MAX_PARKED) {
      asked.answer(DECLINE)
      return await this.#round(call, principal, tool)
    }
    const id = newId()
    this.#parked.set(id, { call, principal, tool })
    // Gone with the call: a retry after it ended is told so, and nothing is held.
    void call.result.then(() => { this.#parked.delete(id) }, () => { this.#parked.delete(id) })
    const requestState = (await guarded(this.#seal)).seal({ v: 1, question: id, principal, tool, expiresAt: Date.now() + this.#ttlMs })
    const inputRequests = { [KEY]: { method: 'elicitation/create', params: { mode: 'form', message: asked.question.message, requestedSchema: asked.question.requestedSchema } } }
    return { inputRequired: `{"resultType":"input_required","inputRequests":${JSON.stringify(inputRequests)},"requestState":${JSON.stringify(requestState)}}` }
  }
}

/** The client's answer to our one question, read defensively: anything else is a cancel. */
function answerOf (inputResponses: unknown): ElicitationAnswer {
  if (typeof inputResponses !== 'object' || inputResponses === null) return CANCEL
  const response = (inputResponses as Record<string, unknown>)[KEY]
  if (typeof response !== 'object' || response === null) return CANCEL
  const { action, content } = response as Record<string, unknown>
  if (action === 'decline' || action === 'cancel') return { action }
  if (action === 'accept' && typeof content === 'object' && content !== null && !Array.isArray(content)) return { action, content: content as Record<string, unknown> }
  return CANCEL
}
