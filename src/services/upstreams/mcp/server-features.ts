import type { Client, Prompt, Resource, ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/client'

/** What a server offers beside its tools, as it last listed them. */
export interface ServerFeatures {
  /** The server declared resources: it may read URIs it does not list (a tool's `resource_link`). */
  readonly readable: boolean
  readonly resources: readonly Resource[]
  readonly templates: readonly ResourceTemplate[]
  readonly prompts: readonly Prompt[]
}

export const NO_FEATURES: ServerFeatures = Object.freeze({ readable: false, resources: [], templates: [], prompts: [] })

/** At most this many of each kind are taken from one server (a listing is held in memory and sent whole). */
export const MAX_FEATURE_ITEMS = 1_000
/** A server whose cursors never end is read this far. */
const MAX_PAGES = 100

/**
 * A server's resources, resource templates and prompts, every page, for the kinds its
 * capabilities declare (a server that declares none is asked nothing). Past
 * `MAX_FEATURE_ITEMS` of a kind, the rest is left out, and `onTruncated` told. A kind whose
 * listing fails (many servers with resources answer no templates) is none, `onFailed` told:
 * the others still serve.
 */
export async function listFeatures (client: Client, onTruncated: (kind: string) => void, onFailed: (kind: string, error: unknown) => void): Promise<ServerFeatures> {
  const capabilities = client.getServerCapabilities() ?? {}
  const resources = capabilities.resources !== undefined
  const prompts = capabilities.prompts !== undefined
  const none = (kind: string) => (error: unknown): [] => { onFailed(kind, error); return [] }
  const [listedResources, listedTemplates, listedPrompts] = await Promise.all([
    resources ? listResources(client, onTruncated).catch(none('resources')) : [],
    resources ? listTemplates(client, onTruncated).catch(none('resource templates')) : [],
    prompts ? listPrompts(client, onTruncated).catch(none('prompts')) : [],
  ])
  return { readable: resources, resources: listedResources, templates: listedTemplates, prompts: listedPrompts }
}

export async function listResources (client: Client, onTruncated: (kind: string) => void): Promise<Resource[]> {
  return await pages('resources', async cursor => { const page = await client.listResources(paged(cursor)); return [page.resources, page.nextCursor] }, onTruncated)
}

export async function listTemplates (client: Client, onTruncated: (kind: string) => void): Promise<ResourceTemplate[]> {
  return await pages('resource templates', async cursor => { const page = await client.listResourceTemplates(paged(cursor)); return [page.resourceTemplates, page.nextCursor] }, onTruncated)
}

export async function listPrompts (client: Client, onTruncated: (kind: string) => void): Promise<Prompt[]> {
  return await pages('prompts', async cursor => { const page = await client.listPrompts(paged(cursor)); return [page.prompts, page.nextCursor] }, onTruncated)
}

function paged (cursor: string | undefined): { cursor: string } | undefined {
  return cursor === undefined ? undefined : { cursor }
}

async function pages<T> (kind: string, read: (cursor: string | undefined) => Promise<[readonly T[], string | undefined]>, onTruncated: (kind: string) => void): Promise<T[]> {
  const items: T[] = []
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const [listed, next] = await read(cursor)
    items.push(...listed)
    if (items.length > MAX_FEATURE_ITEMS) {
      onTruncated(kind)
      return items.slice(0, MAX_FEATURE_ITEMS)
    }
    if (next === undefined) return items
    cursor = next
  }
  onTruncated(kind)
  return items
}
