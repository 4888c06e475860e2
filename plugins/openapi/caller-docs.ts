import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SCOPES } from '../../src/core/app-context.js'
import { PUBLIC_READER, requireScope } from '../../src/services/auth/index.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may reach a route without credentials: `always` (the Swagger UI's page and assets,
     * which name no tool) or `docs` (the document, only when the operator publishes it).
     */
    anonymous?: 'always' | 'docs'
  }
}

export interface CallerDocsOptions {
  /**
   * The document (JSON) of the catalog version serving this request as the caller may see it,
   * its tools as `GET /tools` lists them (one version for both); `whole`: all of it, for the
   * reader of a published document (`DOCS_PUBLIC`).
   */
  readonly documentOf: (request: FastifyRequest, whole: boolean) => string
  /** Serve the Swagger UI at /docs. */
  readonly ui: boolean
}

/**
 * `GET /openapi.json` and the Swagger UI's `/docs/json` as the caller may see them: only the
 * tools it may call, behind the same authentication as `GET /tools` (registered inside that
 * scope). Without credentials, only the UI's page and assets answer, and the document too
 * when the operator publishes it (`DOCS_PUBLIC`), then whole, like `openapi/openapi.json`.
 *
 * The UI runs in a browser, which sends no API key on its own: when its document request is
 * refused, it asks for a credential once, keeps it for the browser tab (sessionStorage) and
 * sends it with the document request and every "Try it out" call.
 */
export async function callerDocs (app: FastifyInstance, options: CallerDocsOptions): Promise<void> {
  const documentFor = (request: FastifyRequest): string => {
    if (request.principal === PUBLIC_READER) return options.documentOf(request, true)
    requireScope(request.principal, SCOPES.read)
    return options.documentOf(request, false)
  }
  // Every route of this scope says who may reach it without credentials (read by admission).
  app.addHook('onRoute', route => {
    const documentRoute = route.url.endsWith('/openapi.json') || route.url.endsWith('/json') || route.url.endsWith('/yaml')
    route.config = { ...route.config, anonymous: documentRoute ? 'docs' : 'always' }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async (request, reply) => sendJson(reply, documentFor(request)))
  if (!options.ui) return
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: {
      docExpansion: 'list',
      deepLinking: true,
      tryItOutEnabled: true,
      requestInterceptor: browserCredentials as never,
      responseInterceptor: askForCredential as never,
    },
    transformSpecificationClone: false,
    transformSpecification: (_document, request, reply) => {
      const text = documentFor(request)
      // The YAML route stringifies what it gets: give it the object; the JSON route the text.
      if (request.url.endsWith('/yaml')) return JSON.parse(text) as Record<string, unknown>
      void reply.type('application/json; charset=utf-8')
      return text as unknown as Record<string, unknown>
    },
  })
}

function sendJson (reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text)
}

/* The two functions below run in the browser: the UI serializes their source into its page. */

/** What the browser functions use, typed here since the gateway compiles without the DOM library. */
declare const sessionStorage: { getItem (key: string): string | null, setItem (key: string, value: string): void }
declare const location: { reload (): void }
declare function prompt (message: string): string | null

/** Send the credential the person gave, as `X-Api-Key` or, for `Bearer ...`, as `Authorization`. */
function browserCredentials (request: { headers: Record<string, string> }): unknown {
  const credential = sessionStorage.getItem('toolgate-credential')
  if (credential !== null && credential !== '') {
    if (/^Bearer /i.test(credential)) request.headers.Authorization = credential
    else request.headers['X-Api-Key'] = credential
  }
  return request
}

/** The document was refused for want of a credential: ask for one, keep it for the tab, load again. */
function askForCredential (response: { status: number, url: string }): unknown {
  if (response.status === 401 && /\/json$/.test(response.url)) {
    const given = prompt('This gateway documents only the tools you may call. Your API key, or "Bearer <token>":')
    if (given !== null && given !== '') {
      sessionStorage.setItem('toolgate-credential', given.trim())
      location.reload()
    }
  }
  return response
}
