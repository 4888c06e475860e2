import { UriTemplate, type Prompt, type Resource } from '@modelcontextprotocol/client'
import { z } from 'zod'
import type { GatewayApp } from '../../../core/app-context.js'
import { defineTool } from '../../../core/define-tool.js'
import type { ToolgateError } from '../../../core/errors.js'
import type { AnyTool, ToolContext } from '../../../core/tool.js'
import type { InvokeResult } from '../../../core/types.js'
import type { McpFeatures } from '../../mcp/features.js'
import { compileGlob } from '../../auth/glob.js'
import { boundedAnswer } from '../answer-bounds.js'
import type { FeatureDeclaration, UpstreamsFile } from '../file.js'
import { upstreamToolId } from '../names.js'
import { compileRule, type Rule } from '../rules.js'
import type { UpstreamConnection, UpstreamCall } from './connection.js'

/*
 * What the upstream MCP servers offer beside their tools, across every server: their resources,
 * resource templates and prompts, as one caller may see them (the operator's `active` rules
 * of the upstreams file), and where a read or a get goes. A read is a call: it runs through the
 * pipeline as an unlisted tool of its server (`{server}_mcp_resources_read`,
 * `{server}_mcp_prompts_get`), so it is scheduled, timed out, bounded, counted, traced and
 * audited as every call is, and the permission rules may name it.
 */

/** Where a caller's resource read or prompt get goes: the unlisted tool that runs it, and its input. */
export interface FeatureCall {
  readonly tool: AnyTool<GatewayApp>
  readonly input: Record<string, unknown>
}

/** Who asks: what the `active` rules see. */
interface Caller {
  readonly id: string
  readonly scopes: readonly string[]
}

/** `_meta` key naming the server a resource or prompt comes from. */
const UPSTREAM_META = 'dev.toolgate/upstream'

interface CompiledRule {
  readonly glob: RegExp
  readonly active: Rule | boolean | undefined
}

interface ServerTools {
  readonly read: AnyTool<GatewayApp>
  readonly get: AnyTool<GatewayApp>
}

export class UpstreamFeatures {
  readonly #connections: readonly UpstreamConnection[]
  readonly #prompts: readonly CompiledRule[]
  readonly #resources: readonly CompiledRule[]
  readonly #tools = new Map<string, ServerTools>()

  /** Throws a `ConfigError` naming the entry when a rule does not compile. */
  constructor (file: UpstreamsFile, connections: readonly UpstreamConnection[]) {
    this.#connections = connections
    this.#prompts = compileRules(file.prompts, 'prompts')
    this.#resources = compileRules(file.resources, 'resources')
    for (const connection of connections) this.#tools.set(connection.config.name, serverTools(connection))
  }

  /** Whether any server is fronted at all (the MCP face then says it serves resources and prompts). */
  get any (): boolean {
    return this.#connections.length > 0
  }

  /** The unlisted tools, one pair per server: for the metrics, which count only tools they know. */
  tools (): Array<AnyTool<GatewayApp>> {
    return [...this.#tools.values()].flatMap(({ read, get }) => [read, get])
  }

  /**
   * The resources `caller` may read, server by server in file order; a URI that an earlier
   * server lists is not listed again (reads go to the first server that lists it). `usable`
   * tells whether the caller may run a server's read tool at all (permission rules).
   */
  resources (caller: Caller, usable: (tool: AnyTool<GatewayApp>) => boolean): Resource[] {
    const seen = new Set<string>()
    const out: Resource[] = []
    for (const connection of this.#usable(usable, 'read')) {
      const server = connection.config.name
      for (const resource of connection.features.resources) {
        if (seen.has(resource.uri)) continue
        seen.add(resource.uri)
        if (isActive(this.#resources, resource.uri, caller)) out.push(withUpstream(resource, server))
      }
    }
    return out
  }

  templates (caller: Caller, usable: (tool: AnyTool<GatewayApp>) => boolean): Array<Record<string, unknown>> {
    return this.#usable(usable, 'read').flatMap(connection => connection.features.templates
      .filter(template => isActive(this.#resources, template.uriTemplate, caller))
      .map(template => withUpstream(template, connection.config.name)))
  }

  /** The prompts `caller` may get, each named by its id (`{server}_{prompt}`), the server's own name in `_meta`. */
  prompts (caller: Caller, usable: (tool: AnyTool<GatewayApp>) => boolean): Prompt[] {
    const out: Prompt[] = []
    const seen = new Set<string>()
    for (const connection of this.#usable(usable, 'get')) {
      const server = connection.config.name
      for (const prompt of connection.features.prompts) {
        const id = promptId(server, prompt.name)
        if (id === undefined || seen.has(id)) continue
        seen.add(id)
        if (isActive(this.#prompts, id, caller)) out.push({ ...prompt, name: id, _meta: { ...prompt._meta, [UPSTREAM_META]: { server, name: prompt.name } } })
      }
    }
    return out
  }

  /**
   * Where a read of `uri` goes: the first server (in file order) that lists it, else the first
   * whose template matches it, else the only server that reads resources at all (servers read
   * more than they list: a tool's `resource_link`); undefined when none does or the rules hide
   * it from `caller`.
   */
  resource (uri: string, caller: Caller): FeatureCall | undefined {
    if (!isActive(this.#resources, uri, caller)) return undefined
    const readers = this.#connections.filter(connection => connection.features.readable)
    const owner = readers.find(connection => connection.features.resources.some(resource => resource.uri === uri)) ??
      readers.find(connection => connection.features.templates.some(template => matches(template.uriTemplate, uri))) ??
      (readers.length === 1 ? readers[0] : undefined)
    if (owner === undefined) return undefined
    return { tool: this.#tools.get(owner.config.name)!.read, input: { uri } }
  }

  /** Where a get of prompt `id` goes, with the prompt as its server lists it; undefined when unknown or hidden from `caller`. */
  prompt (id: string, caller: Caller): { readonly call: FeatureCall, readonly prompt: Prompt } | undefined {
    if (!isActive(this.#prompts, id, caller)) return undefined
    for (const connection of this.#connections) {
      const server = connection.config.name
      const prompt = connection.features.prompts.find(candidate => promptId(server, candidate.name) === id)
      if (prompt !== undefined) return { prompt, call: { tool: this.#tools.get(server)!.get, input: { name: prompt.name } } }
    }
    return undefined
  }

  /**
   * One caller's view for an MCP face: what it may list, and its reads and gets entering the
   * pipeline through `run` (the face's `GatewayCalls.call`, with the unlisted tool).
   */
  forCaller (caller: Caller, usable: (tool: AnyTool<GatewayApp>) => boolean, run: (call: FeatureCall) => Promise<InvokeResult>, problemOf: (error: ToolgateError) => Record<string, unknown>): McpFeatures {
    return {
      resources: () => this.resources(caller, usable),
      templates: () => this.templates(caller, usable),
      prompts: () => this.prompts(caller, usable),
      resource: uri => {
        const call = this.resource(uri, caller)
        return call === undefined || !usable(call.tool) ? undefined : async () => await run(call)
      },
      prompt: id => {
        const found = this.prompt(id, caller)
        if (found === undefined || !usable(found.call.tool)) return undefined
        return { arguments: found.prompt.arguments ?? [], run: async args => await run({ ...found.call, input: { ...found.call.input, arguments: args } }) }
      },
      problemOf,
    }
  }

  #usable (usable: (tool: AnyTool<GatewayApp>) => boolean, which: keyof ServerTools): UpstreamConnection[] {
    return this.#connections.filter(connection => usable(this.#tools.get(connection.config.name)![which]))
  }
}

/** A prompt's id: as a tool's, `{server}_{prompt}`, shortened the same way when too long. */
function promptId (server: string, name: string): string | undefined {
  return upstreamToolId(server, name, {})
}

function withUpstream<T extends { _meta?: Record<string, unknown> }> (item: T, server: string): T {
  return { ...item, _meta: { ...item._meta, [UPSTREAM_META]: { server } } }
}

function compileRules (rules: Readonly<Record<string, FeatureDeclaration>>, section: 'prompts' | 'resources'): CompiledRule[] {
  return Object.entries(rules).map(([key, declaration]) => ({
    glob: compileGlob(key),
    active: compileRule(key, 'active', declaration.active, `upstreams file: ${section}["${key}"].active`),
  }))
}

/** The entries that match `name`, in file order; the last one that says anything decides (none: active). */
function isActive (rules: readonly CompiledRule[], name: string, caller: Caller): boolean {
  let active: Rule | boolean | undefined
  for (const rule of rules) if (rule.active !== undefined && rule.glob.test(name)) active = rule.active
  if (active === undefined || typeof active === 'boolean') return active ?? true
  return active(undefined, caller)
}

const templates = new Map<string, UriTemplate | null>()

/** Whether `uri` is one of the template's (RFC 6570, as the SDK reads it); a template that does not parse matches nothing. */
function matches (template: string, uri: string): boolean {
  let parsed = templates.get(template)
  if (parsed === undefined) {
    try {
      parsed = new UriTemplate(template)
    } catch {
      parsed = null
    }
    // Bounded: a server that lists ever new templates does not grow this without end.
    if (templates.size >= 10_000) templates.clear()
    templates.set(template, parsed)
  }
  return parsed?.match(uri) != null
}

function serverTools (connection: UpstreamConnection): ServerTools {
  const server = connection.config.name
  const who = `upstream "${server}"`
  // `ctx.signal` is made only if read (see the tools' declarations).
  const callOf = (ctx: ToolContext<GatewayApp>): UpstreamCall => ({ get signal () { return ctx.signal }, onAbort: ctx.onAbort, readOnly: true, trace: ctx.trace, principal: ctx.app.principal })
  const read = defineTool<z.ZodType<{ uri: string }>, z.ZodType<Record<string, unknown>>, GatewayApp>({
    id: featureToolId(server, 'mcp resources read'),
    kind: 'resource',
    description: `Reads a resource of the MCP server "${server}" (resources/read).`,
    inputSchema: z.object({ uri: z.string().min(1).max(8192) }),
    outputSchema: z.looseObject({ contents: z.array(z.looseObject({ uri: z.string() })) }),
    effects: [],
    isReadOnly: true,
    isConcurrencySafe: true,
    authorize () {},
    resolve: input => ({ upstream: server, method: 'resources/read', params: input }),
    execute: async ({ uri }, ctx) => boundedAnswer(await connection.readResource(uri, callOf(ctx)), who),
    origin: { type: 'mcp', server, name: 'resources/read', declaredBy: {} },
  })
  const get = defineTool<z.ZodType<{ name: string, arguments?: Record<string, string> }>, z.ZodType<Record<string, unknown>>, GatewayApp>({
    id: featureToolId(server, 'mcp prompts get'),
    kind: 'prompt',
    description: `Gets a prompt of the MCP server "${server}" (prompts/get).`,
    inputSchema: z.object({ name: z.string().min(1).max(1024), arguments: z.record(z.string(), z.string()).optional() }),
    outputSchema: z.looseObject({ messages: z.array(z.looseObject({ role: z.string() })) }),
    effects: [],
    isReadOnly: true,
    isConcurrencySafe: true,
    authorize () {},
    resolve: input => ({ upstream: server, method: 'prompts/get', params: input }),
    execute: async (input, ctx) => boundedAnswer(await connection.getPrompt(input.name, input.arguments ?? {}, callOf(ctx)), who),
    origin: { type: 'mcp', server, name: 'prompts/get', declaredBy: {} },
  })
  return { read: read as unknown as AnyTool<GatewayApp>, get: get as unknown as AnyTool<GatewayApp> }
}

function featureToolId (server: string, what: string): string {
  // A server's name always makes an id here: it is a letter, then letters, digits, _, . or -.
  return upstreamToolId(server, what, {})!
}
