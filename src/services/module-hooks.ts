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
 */
import { readFile } from 'node:fs/promises'
import type { InitializeHook, LoadHook, ResolveHook } from 'node:module'
import { fileURLToPath } from 'node:url'

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
  if (!url.startsWith('file:') || !TYPESCRIPT.test(url) || url.includes('/node_modules/')) return await nextLoad(url, context)
  const path = fileURLToPath(url)
  // Loaded only when a .ts tool is: a folder of .js tools never starts esbuild.
  const { transform } = await import('esbuild')
  const { code } = await transform(await readFile(path, 'utf8'), {
    loader: 'ts', format: 'esm', target: 'node20', sourcefile: path, sourcemap: 'inline',
  })
  return { format: 'module', source: code, shortCircuit: true }
}
