/**
 * Node module hooks for the tools folder `serve` loads (registered by `registerToolHooks`,
 * run on Node's hooks thread):
 *
 * - A tool folder with no `node_modules` of its own still imports `toolgate` and `zod`: when
 *   plain resolution fails for them, they resolve from the gateway's own package, so the tools
 *   share the gateway's one zod and one core (a second copy would break `instanceof ToolError`).
 * - A `.js` specifier that names a `.ts` file resolves to it, and `.ts` files are stripped to
 *   JavaScript by esbuild: a user's tools may be TypeScript. The gateway itself is compiled
 *   JavaScript and is never transpiled here.
 * - A module imported with a helpers fingerprint (a reload after a helper changed, see
 *   `module-versions.ts`) passes it on to what it imports from its tools folder, so every
 *   helper is the new one.
 */
import { readFile } from 'node:fs/promises'
import type { InitializeHook, LoadHook, ResolveHook } from 'node:module'
import { sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HELPERS_PARAM, ROOT_PARAM } from './module-versions.js'

export interface ToolHooksData {
  /** A file URL inside the gateway's package (its package.json): where shared packages resolve from. */
  readonly gatewayUrl: string
}

const SHARED_PACKAGES = /^(toolgate|zod)(\/|$)/
const TYPESCRIPT = /\.(c|m)?ts$/
let gatewayUrl: string | undefined

export const initialize: InitializeHook<ToolHooksData> = data => {
  gatewayUrl = data.gatewayUrl
}

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  const resolved = await resolveShared(specifier, context, nextResolve)
  return withHelpersVersion(resolved, context.parentURL)
}

/** The parent's helpers fingerprint on a file of the same tools folder (node_modules aside). */
function withHelpersVersion (resolved: Awaited<ReturnType<ResolveHook>>, parentURL: string | undefined): Awaited<ReturnType<ResolveHook>> {
  if (parentURL === undefined || !parentURL.includes(HELPERS_PARAM) || !resolved.url.startsWith('file:')) return resolved
  const parent = new URL(parentURL)
  const helpers = parent.searchParams.get(HELPERS_PARAM)
  const root = parent.searchParams.get(ROOT_PARAM)
  if (helpers === null || root === null) return resolved
  const url = new URL(resolved.url)
  const path = fileURLToPath(url)
  if (!path.startsWith(root + sep) || path.slice(root.length).includes(`${sep}node_modules${sep}`) || url.search !== '') return resolved
  url.searchParams.set(HELPERS_PARAM, helpers)
  url.searchParams.set(ROOT_PARAM, root)
  return { ...resolved, url: url.href }
}

const resolveShared: ResolveHook = async (specifier, context, nextResolve) => {
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error
    if (SHARED_PACKAGES.test(specifier) && gatewayUrl !== undefined) return await nextResolve(specifier, { ...context, parentURL: gatewayUrl })
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:')
    if (relative && specifier.endsWith('.js')) return await nextResolve(`${specifier.slice(0, -3)}.ts`, context)
    throw error
  }
}

export const load: LoadHook = async (url, context, nextLoad) => {
  if (!url.startsWith('file:') || !TYPESCRIPT.test(new URL(url).pathname) || url.includes('/node_modules/')) return await nextLoad(url, context)
  const path = fileURLToPath(url)
  // Loaded only when a .ts tool is: a folder of .js tools never starts esbuild.
  const { transform } = await import('esbuild')
  const { code } = await transform(await readFile(path, 'utf8'), {
    loader: 'ts', format: 'esm', target: 'node20', sourcefile: path, sourcemap: 'inline',
  })
  return { format: 'module', source: code, shortCircuit: true }
}
