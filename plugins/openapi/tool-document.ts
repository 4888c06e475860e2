import type { Limit } from '../../src/core/limits/limit.js'
import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance } from 'fastify'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { GatewayError, type AnyTool, type GatewayApp, type ToolSet } from '../../src/index.js'
import { DocumentViews } from '../../src/services/document-views.js'
import { swaggerSettings } from './openapi.js'
import { operationOf } from './tool-operation.js'
import { ANY_ROUTE_STATUSES } from '../http/problem.js'
import { documentStatuses } from '../http/problem-schemas.js'

type Document = Record<string, unknown>
/** One tool's operation, and the named schemas of the chunk it was generated in (a superset of its own). */
interface ToolPart { readonly path: string, readonly item: unknown, readonly schemas: Document, readonly generation: number }

/** Tools per generator instance: the event loop gets a turn between chunks (a thousand tools take a second or more). */
const CHUNK = 25
const TOOL_PATH = /\/tools\/([a-z][a-z0-9_]{0,63})$/

export interface ToolDocumentsOptions {
  /** The gateway's own routes, as `app.swagger()` generates them (read once it is ready). */
  readonly gateway: () => Document
  readonly version: string
  /** The prefix the gateway's routes are served under ('' standalone). */
  readonly prefix: string
  readonly defaultTimeoutMs: number
  /** Whether a call of the tool can wait for approval in this configuration (see `approvableBy`). */
  readonly approvable: (tool: AnyTool) => boolean
  /** The limits that cover the tool (operator's and its own), documented on its operation. */
  readonly limits?: (tool: AnyTool) => readonly Limit[]
}

/**
 * The OpenAPI document of each catalog version: the gateway's routes (generated once, with the
 * app) and the tools' operations, generated for every set, before it is installed, by the same
 * `@fastify/swagger` transform a route would get. A set's document and its per-caller views
 * live as long as the set does.
 */
export class ToolDocuments {
  readonly #options: ToolDocumentsOptions
  readonly #views = new WeakMap<ToolSet<GatewayApp>, DocumentViews>()
  /** Per declaration: a reload regenerates only the operations of tools that changed. */
  readonly #parts = new WeakMap<AnyTool<GatewayApp>, ToolPart>()
  #generation = 0

  constructor (options: ToolDocumentsOptions) {
    this.#options = options
  }

  /** Generate the document of `set`, yielding to the event loop between chunks of tools. */
  async prepare (set: ToolSet<GatewayApp>): Promise<void> {
    if (this.#views.has(set)) return
    const missing = set.tools.filter(tool => !this.#parts.has(tool))
    for (let start = 0; start < missing.length; start += CHUNK) {
      await this.#generate(missing.slice(start, start + CHUNK))
      await yieldToLoop()
    }
    this.#views.set(set, this.#viewsOf(set, set.tools.map(tool => this.#parts.get(tool)!)))
  }

  /** The views of a prepared set (see `prepare`); a set still being prepared is a 503 with Retry-After. */
  views (set: ToolSet<GatewayApp>): DocumentViews {
    const views = this.#views.get(set)
    if (views === undefined) throw new GatewayError('TOOLGATE_UNAVAILABLE', `the document of tool set ${set.version} is being generated; retry shortly`, { retryAfter: 1 })
    return views
  }

  #viewsOf (set: ToolSet<GatewayApp>, parts: readonly ToolPart[]): DocumentViews {
    const gateway = this.#options.gateway()
    const components = (gateway.components ?? {}) as { schemas?: Document }
    // A named schema two chunks share takes its newest definition (the tool that changed last).
    const chunks = [...parts].sort((a, b) => a.generation - b.generation).map(part => part.schemas)
    const merged = Object.assign({}, components.schemas, ...new Set(chunks)) as Document
    // By name: the order modules happen to register their schemas in is no order to commit.
    const schemas = Object.fromEntries(Object.keys(merged).sort().map(name => [name, merged[name]])) as Document
    const toolPaths = Object.fromEntries(parts.map(part => [part.path, part.item])) as Document
    const document = { ...gateway, paths: withToolPaths(gateway.paths as Document, toolPaths, this.#options.prefix), components: { ...components, schemas } }
    return new DocumentViews(() => document, path => {
      const match = TOOL_PATH.exec(path)
      return match !== null && set.byId.has(match[1]!) ? match[1] : undefined
    })
  }

  async #generate (tools: readonly AnyTool<GatewayApp>[]): Promise<void> {
    const pathOf = (tool: AnyTool<GatewayApp>): string => `${this.#options.prefix}/tools/${tool.id}`
    const generator: FastifyInstance = Fastify({ logger: false })
    const generation = ++this.#generation
    try {
      // Nothing is ever validated or sent here: the routes exist only to be described.
      generator.setValidatorCompiler(() => () => true)
      generator.setSerializerCompiler(() => data => JSON.stringify(data))
      await generator.register(swagger, swaggerSettings(this.#options.version))
      // Documented as the gateway's own routes are (problem.ts).
      generator.addHook('onRoute', route => { documentStatuses(route as { schema?: Record<string, unknown> }, ANY_ROUTE_STATUSES) })
      for (const tool of tools) generator.post(pathOf(tool), { schema: operationOf(tool, this.#options.defaultTimeoutMs, this.#options.approvable(tool), this.#options.limits?.(tool)) }, unreachable)
      await generator.ready()
      const document = generator.swagger() as unknown as Document
      const paths = (document.paths ?? {}) as Document
      const schemas = (document.components as { schemas?: Document } | undefined)?.schemas ?? {}
      const part = { schemas, generation }
      for (const tool of tools) this.#parts.set(tool, { ...part, path: pathOf(tool), item: paths[pathOf(tool)] })
    } finally {
      await generator.close()
    }
  }
}

async function unreachable (): Promise<never> {
  throw new Error('the document generator serves no request')
}

/** The tools' paths where their routes stood: right after `GET /tools/{id}` (else at the end). */
function withToolPaths (gateway: Document, tools: Document, prefix: string): Document {
  const after = `${prefix}/tools/{id}`
  if (!(after in gateway)) return { ...gateway, ...tools }
  const paths: Document = {}
  for (const [path, item] of Object.entries(gateway)) {
    paths[path] = item
    if (path === after) Object.assign(paths, tools)
  }
  return paths
}
