import { ToolError, UpstreamError } from '../../../core/errors.js'
import { isAnyCallStatus } from '../../../core/tool-errors.js'
import type { TraceContext } from '../../../core/tool.js'
import { compileGlob } from '../../auth/glob.js'
import { ConfigError } from '../../config.js'
import { VERSION } from '../../version.js'
import type { UpstreamLog, UpstreamStatus } from '../status.js'
import { baseUrlProblem, redact, type OpenApiServiceConfig } from '../file.js'
import { readOpenApiDocument } from './document.js'
import { HttpFailure, ServiceHttp, type HttpAnswer } from './http.js'
import { isJson, operationIdPart, passesThrough, planOperation, serviceErrorCode, type OperationPlan } from './operation.js'
import { buildRequest } from './request.js'
import { Slots } from '../slots.js'
import { boundedAnswer } from '../answer-bounds.js'
import type { Principal } from '../../../core/app-context.js'
import { credentialWaitMs, type UpstreamCredential } from '../credentials/credential.js'

/*
 * One HTTP API fronted through its OpenAPI document: the document read (at start-up and on
 * every reload; a reload that cannot read it keeps what serves), its operations planned, and
 * every call sent with the service's own credentials and nobody else's. What the service
 * answers maps to the gateway's errors: its 4xx as its own status, everything else 502 or 503
 * with a generic detail (the log has the answer). Only read-only operations are retried, once,
 * and only when the connection failed.
 */

export interface ServiceCall {
  readonly signal: AbortSignal
  readonly readOnly: boolean
  readonly trace?: TraceContext
  /** Whom the call is for: the service's credential is made for them (see credentials/). */
  readonly principal?: Principal
  /** The tool's own timeout, when it has one: how long getting a credential may take is a share of it. */
  readonly timeoutMs?: number
}

/** A document read and planned, not yet served. */
export type ReadDocument = readonly OperationPlan[] & { readonly baseUrl: string, readonly skipped: ReadonlyArray<{ readonly operation: string, readonly why: string }> }

/** The most operations taken from one document. */
const MAX_OPERATIONS = 1_000
/** How much of a 4xx answer a caller sees. */
const REJECTION_CHARS = 2_000

export class OpenApiService {
  readonly config: OpenApiServiceConfig
  readonly #log: UpstreamLog
  readonly #maxBytes: number
  readonly #slots: Slots
  #http: ServiceHttp | undefined
  #plans: readonly OperationPlan[] = []
  #skipped: ReadonlyArray<{ readonly operation: string, readonly why: string }> = []
  #since = Date.now()
  #lastError: string | undefined

  readonly #credential: UpstreamCredential | undefined
  readonly #toolTimeoutMs: number

  constructor (config: OpenApiServiceConfig, options: { readonly log: UpstreamLog, readonly maxResponseBytes: number, readonly credential?: UpstreamCredential | undefined, readonly toolTimeoutMs?: number }) {
    this.config = config
    this.#log = options.log
    this.#maxBytes = options.maxResponseBytes
    this.#credential = options.credential
    this.#toolTimeoutMs = options.toolTimeoutMs ?? 30_000
    this.#slots = new Slots(config.maxInFlight, config.maxQueue)
  }

  /** The operations served, as last read. */
  get plans (): readonly OperationPlan[] {
    return this.#plans
  }

  /** Read the document and serve its operations (start-up). */
  async load (): Promise<void> {
    this.commit(await this.read())
  }

  /**
   * Read the document and plan its operations; nothing changes until `commit`. Throws a
   * `ConfigError` naming the service when the document cannot be read, parsed or called.
   */
  async read (): Promise<ReadDocument> {
    const { config } = this
    let document
    try {
      document = await readOpenApiDocument(config.name, config.document)
    } catch (error) {
      this.#lastError = this.#redact((error as Error).message)
      throw error
    }
    const baseUrl = config.baseUrl ?? document.serverUrl
    if (baseUrl === undefined) throw new ConfigError(`openapi service "${config.name}": its document names no absolute server URL; set "baseUrl"`)
    const problem = baseUrlProblem(baseUrl)
    if (problem !== undefined) throw new ConfigError(`openapi service "${config.name}": the base URL ${this.#redact(baseUrl)} ${problem}`)
    const include = config.include?.map(glob => compileGlob(glob))
    const exclude = config.exclude.map(glob => compileGlob(glob))
    const chosen = (names: readonly string[]): boolean => (include === undefined || include.some(g => names.some(n => g.test(n)))) && !exclude.some(g => names.some(n => g.test(n)))
    const plans: OperationPlan[] = []
    const skipped: Array<{ operation: string, why: string }> = []
    for (const operation of document.operations) {
      const planned = planOperation(document, operation, [...Object.keys(config.headers), ...this.#credential?.headerNames ?? []])
      const names = 'plan' in planned ? [planned.plan.name, operationIdPart(operation)] : [planned.name, operationIdPart(operation)]
      if (!chosen(names)) continue
      if ('skipped' in planned) {
        skipped.push({ operation: planned.name, why: planned.skipped })
        this.#log.warn({ upstream: config.name, operation: planned.name, why: planned.skipped }, 'an operation of this service is not served')
        continue
      }
      plans.push(planned.plan)
    }
    if (plans.length > MAX_OPERATIONS) throw new ConfigError(`openapi service "${config.name}": ${plans.length} operations; at most ${MAX_OPERATIONS} are taken from one document (narrow it with "include")`)
    return Object.assign(plans, { baseUrl, skipped })
  }

  /** Serve what `read` gave. */
  commit (read: ReadDocument): void {
    const url = new URL(read.baseUrl)
    if (this.#http?.origin !== url.origin || this.#http.basePath !== url.pathname) {
      this.#http?.close()
      this.#http = new ServiceHttp(read.baseUrl, this.config.maxInFlight, this.#maxBytes)
    }
    this.#plans = [...read]
    this.#skipped = read.skipped
    this.#since = Date.now()
    this.#lastError = undefined
    this.#log.info({ upstream: this.config.name, operations: read.length, skipped: read.skipped.length }, 'openapi service read')
  }

  status (): UpstreamStatus {
    return {
      name: this.config.name,
      transport: 'openapi',
      state: this.#http === undefined ? 'down' : 'up',
      required: false,
      tools: this.#plans.length,
      restarts: 0,
      inFlight: this.#slots.inFlight,
      since: this.#since,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
      ...(this.#skipped.length === 0 ? {} : { skipped: this.#skipped }),
      ...(this.#credential === undefined ? {} : { auth: this.#credential.mode }),
    }
  }

  /** The request a call would send, with the service's headers redacted: what a dry run answers. */
  describe (plan: OperationPlan, input: Readonly<Record<string, unknown>>): unknown {
    const http = this.#ready()
    const built = buildRequest(plan, http.basePath, input)
    const headers: Record<string, string> = { accept: plan.accept, ...built.headers }
    for (const name of [...Object.keys(this.config.headers), ...this.#credential?.headerNames ?? []]) headers[name] = '[redacted]'
    return {
      service: this.config.name,
      method: built.method,
      url: http.origin + built.target,
      headers,
      ...(built.body === undefined ? {} : { contentType: built.body.contentType, body: plan.body?.form === true ? built.body.bytes.toString() : input.body }),
    }
  }

  async call (plan: OperationPlan, input: Readonly<Record<string, unknown>>, call: ServiceCall): Promise<unknown> {
    const http = this.#ready()
    const built = buildRequest(plan, http.basePath, input)
    const headers: Record<string, string> = {
      ...built.headers,
      accept: plan.accept,
      'user-agent': `toolgate/${VERSION}`,
      ...this.config.headers,
      ...(call.trace === undefined ? {} : { traceparent: call.trace.traceparent, ...(call.trace.tracestate === undefined ? {} : { tracestate: call.trace.tracestate }) }),
    }
    // Made before the call takes a slot, and never when it is refused: nothing is sent without it.
    let applied = this.#credential === undefined ? undefined : await this.#credential.apply(call.principal, credentialWaitMs(call.timeoutMs ?? this.#toolTimeoutMs))
    if (applied !== undefined) Object.assign(headers, applied.headers)
    const release = await this.#slots.acquire(call, this.config.name)
    let answer: HttpAnswer
    try {
      try {
        answer = await http.send(built, headers, call.signal)
        // A 401 to a kept token (revoked, rotated): once more with a new one; to a new one, the credential says 502.
        while (answer.status === 401 && applied !== undefined) {
          applied = await applied.refused()
          Object.assign(headers, applied.headers)
          answer = await http.send(built, headers, call.signal)
        }
      } catch (error) {
        if (call.signal.aborted || !(error instanceof HttpFailure)) throw error
        const connection = error.kind === 'unreachable' || error.kind === 'lost'
        if (!connection || !call.readOnly) throw this.#failed(plan, error, call.readOnly)
        // A read-only operation changed nothing: once more.
        this.#log.warn({ upstream: this.config.name, operation: plan.name, reason: error.message }, 'a read-only call failed to connect or lost its connection; retrying it once')
        try {
          answer = await http.send(built, headers, call.signal)
        } catch (again) {
          if (call.signal.aborted || !(again instanceof HttpFailure)) throw again
          throw this.#failed(plan, again, true)
        }
      }
    } finally {
      release()
    }
    return this.#answerOf(plan, answer)
  }

  close (): void {
    this.#http?.close()
  }

  #ready (): ServiceHttp {
    if (this.#http === undefined) throw new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `service "${this.config.name}" has no document read yet`, { retryAfter: 5, upstream: this.config.name })
    return this.#http
  }

  #failed (plan: OperationPlan, error: HttpFailure, readOnly: boolean): UpstreamError {
    const where = { upstream: this.config.name, operation: plan.name }
    this.#log.warn({ ...where, kind: error.kind, reason: this.#redact(error.message) }, 'a call to an openapi service failed')
    if (error.kind === 'unreachable') return new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `service "${this.config.name}" cannot be reached; retry after 1 s`, { retryAfter: 1, upstream: this.config.name })
    if (error.kind === 'lost' && !readOnly) return new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `the connection to service "${this.config.name}" broke during the call; it may or may not have taken effect: check before retrying`, { outcome: 'unknown' })
    const what = error.kind === 'too_large' ? 'answered more than MAX_RESPONSE_BYTES' : error.kind === 'redirect' ? 'redirected the call where it is not followed' : 'lost the connection'
    return new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `service "${this.config.name}" ${what}`)
  }

  #answerOf (plan: OperationPlan, answer: HttpAnswer): unknown {
    const type = String(answer.headers['content-type'] ?? '')
    const { status } = answer
    if (status >= 200 && status < 300) {
      if (answer.body.length === 0 || status === 204 || status === 205) return null
      const text = answer.body.toString('utf8')
      if (!isJson(type) && type !== '') return text
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        if (type === '') return text
        this.#logAnswer(plan, answer, 'a 2xx answer that is not JSON')
        throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `service "${this.config.name}" answered a body that is not the JSON it declares`)
      }
      return boundedAnswer(value, `service "${this.config.name}"`)
    }
    if (status === 401 || status === 407) {
      this.#logAnswer(plan, answer, 'the service refused the gateway\'s credentials')
      throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `service "${this.config.name}" refused the gateway's own credentials (HTTP ${status}); the operator must fix its headers`)
    }
    if (status >= 400 && status < 500 && !passesThrough(status)) {
      this.#logAnswer(plan, answer, 'the service answered a 4xx about the gateway\'s own request')
      throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `service "${this.config.name}" answered ${status} to the gateway's request; that status is about the request the gateway made, not this call's input`, {
        upstream: this.config.name, upstreamStatus: status, upstreamBody: this.#bodyOf(answer),
      })
    }
    if (status >= 400 && status < 500) {
      // A status its document does not give, and that no operation documents, would be in no document: the service broke its own.
      if (!isAnyCallStatus(status) && !plan.clientErrors.some(error => error.status === status)) {
        this.#logAnswer(plan, answer, 'the service answered a 4xx its document does not declare')
        throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `service "${this.config.name}" answered ${status}, which its document does not declare for this operation`)
      }
      const retryAfter = status === 429 ? retryAfterOf(answer) : undefined
      throw new ToolError(status, serviceErrorCode(status), `service "${this.config.name}" answered ${status}`, {
        upstream: this.config.name,
        upstreamStatus: status,
        upstreamBody: this.#bodyOf(answer),
        ...(retryAfter === undefined ? {} : { retryAfter }),
      })
    }
    this.#logAnswer(plan, answer, 'the service failed')
    if (status === 503) throw new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `service "${this.config.name}" is unavailable`, { retryAfter: retryAfterOf(answer) ?? 1, upstream: this.config.name })
    throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `service "${this.config.name}" failed (HTTP ${status})`)
  }

  /** A 4xx body for the caller: JSON when it is JSON, else text, bounded, every secret of the service taken out. */
  #bodyOf (answer: HttpAnswer): unknown {
    const text = this.#redact(answer.body.subarray(0, REJECTION_CHARS * 4).toString('utf8'))
    if (isJson(String(answer.headers['content-type'] ?? '')) && text.length <= REJECTION_CHARS) {
      try {
        return JSON.parse(text)
      } catch {}
    }
    return text.slice(0, REJECTION_CHARS)
  }

  #logAnswer (plan: OperationPlan, answer: HttpAnswer, message: string): void {
    this.#log.warn({ upstream: this.config.name, operation: plan.name, status: answer.status, body: this.#redact(answer.body.subarray(0, 4096).toString('utf8')) }, message)
  }

  #redact (text: string): string {
    return redact(text, this.config.secrets)
  }
}

/** A service's `Retry-After` in seconds (1 to 3,600), or undefined. */
function retryAfterOf (answer: HttpAnswer): number | undefined {
  const header = answer.headers['retry-after']
  if (typeof header !== 'string') return undefined
  const seconds = /^\d+$/.test(header.trim()) ? Number(header.trim()) : Math.ceil((Date.parse(header) - Date.now()) / 1000)
  if (!Number.isFinite(seconds)) return undefined
  return Math.min(3_600, Math.max(1, seconds))
}
