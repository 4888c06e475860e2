import { createContextKey, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type AttributeValue, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api'
import { AttributeShape, setOwnAttributes, setShapedAttributes } from './own-attributes.js'

/*
 * The HTTP server span of one request, after the HTTP semantic conventions: kind SERVER, named
 * `{method} {route}` (`{method}` alone where no route matched), its parent the caller's W3C
 * trace context and nothing else: read from the request's own headers, never from whatever
 * context happens to be active when the hook runs.
 *
 * It is never made the active context. Only a tool call needs one (its code runs with its call's
 * span active), and the call span takes this span's context as its parent explicitly.
 */

/** The request as the span needs it: the HTTP face passes its own. */
export interface ServerRequest {
  readonly method: string
  /** The path as sent, without the query. */
  readonly path: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** Asked only of a span that records. */
  details (): RequestDetails
}

interface RequestDetails {
  /** The matched route's pattern (`/tools/:id`), undefined where no route matched. */
  readonly route: string | undefined
  readonly scheme: string
  readonly httpVersion: string
}

const SERVER: SpanOptions = Object.freeze({ kind: SpanKind.SERVER })

/** The request, set when the span starts; its route and status when it ends (a route may be renamed on the way). */
const REQUEST = new AttributeShape(['http.request.method', 'url.path', 'url.scheme', 'network.protocol.version'])
const ROUTE = new AttributeShape(['http.route'])
const STATUS = new AttributeShape(['http.response.status_code'])

/** The API's key of the span in a context: `createContextKey` is `Symbol.for`, so this is the key `trace.setSpan` writes. */
const SPAN_KEY = createContextKey('OpenTelemetry Context Key SPAN')

/**
 * The caller's context with the server span in it, as `trace.setSpan` would make it, without
 * what that costs every request (a copy of the context's map and three closures: 488 of the
 * 1,121 bytes an unsampled call allocated for its two spans). Reads see the span, and the caller's
 * context for anything else; a write makes the API's own context first.
 */
class WithSpan implements Context {
  constructor (readonly parent: Context, readonly span: Span) {}

  getValue (key: symbol): unknown {
    return key === SPAN_KEY ? this.span : this.parent.getValue(key)
  }

  setValue (key: symbol, value: unknown): Context {
    return trace.setSpan(this.parent, this.span).setValue(key, value)
  }

  deleteValue (key: symbol): Context {
    return trace.setSpan(this.parent, this.span).deleteValue(key)
  }
}

export class ServerSpan {
  readonly span: Span
  #context: Context | undefined
  readonly #parent: Context
  /** `http.route`, set when the span ends. */
  #route: string | undefined
  #ended = false

  constructor (tracer: Tracer, request: ServerRequest) {
    this.#parent = propagation.extract(ROOT_CONTEXT, request.headers)
    // Named by its method until it is known to record (the samplers toolgate configures decide
    // on the trace id and the parent only): a route, its name and its attributes would be
    // objects made and dropped on every request the sampler leaves out.
    this.span = tracer.startSpan(request.method, SERVER, this.#parent)
    if (this.span.isRecording()) {
      const { route, scheme, httpVersion } = request.details()
      if (route !== undefined) this.span.updateName(`${request.method} ${route}`)
      this.#route = route
      setShapedAttributes(this.span, { shape: REQUEST, values: [request.method, request.path, scheme, httpVersion] })
    }
  }

  /** The caller's context with this span in it: the parent of the calls the request makes. */
  get context (): Context {
    this.#context ??= new WithSpan(this.#parent, this.span)
    return this.#context
  }

  get isRecording (): boolean {
    return this.span.isRecording()
  }

  /**
   * What the request is really about: the REST route of one tool (`POST /tools/get_weather` for
   * the one route that serves every tool, `route` its `http.route`), an MCP method and its tool
   * (`attributes` saying which).
   */
  rename (name: string, route?: string, attributes?: Readonly<Record<string, AttributeValue>>): void {
    if (!this.span.isRecording()) return
    this.span.updateName(name)
    if (route !== undefined) this.#route = route
    if (attributes !== undefined) setOwnAttributes(this.span, attributes)
  }

  /** Close with the status sent (or `aborted` when the client went away first); once only. */
  end (statusCode: number, aborted = false): void {
    if (this.#ended) return
    this.#ended = true
    const span = this.span
    if (span.isRecording()) {
      if (this.#route !== undefined) setShapedAttributes(span, { shape: ROUTE, values: [this.#route] })
      if (aborted) {
        span.setAttribute('toolgate.client_aborted', true)
      } else {
        setShapedAttributes(span, { shape: STATUS, values: [statusCode] })
        // Server spans are errors for 5xx only: a 4xx is the client's mistake (HTTP conventions).
        if (statusCode >= 500) {
          span.setAttribute('error.type', String(statusCode))
          span.setStatus({ code: SpanStatusCode.ERROR })
        }
      }
    }
    span.end()
  }
}
