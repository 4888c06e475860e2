import { readdirSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { extname, join, resolve } from 'node:path'
import type { ToolHooksData } from './module-hooks.js'

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts'])
const SHARED_PACKAGES = ['toolgate', 'zod'] as const
let registered = false

/**
 * Prepare the process to import the tools in `dir`: install the module hooks (TypeScript tools,
 * `toolgate` and `zod` from the gateway's own package) when the folder needs them. A folder of
 * JavaScript that resolves both packages itself needs none, and then no hooks thread is
 * started (it costs memory for the life of the process).
 */
export function prepareToolsDir (dir: string): void {
  if (hasTypeScript(dir) || SHARED_PACKAGES.some(name => !resolvesFrom(dir, name))) registerToolHooks()
}

/** Install the hooks unconditionally; once per process. True when this call installed them. */
export function registerToolHooks (): boolean {
  if (registered) return false
  registered = true
  const data: ToolHooksData = { gatewayUrl: packageJsonUrl() }
  // In the clone, from source (tsx, vitest), the hooks file is TypeScript; in the package it is compiled.
  const hooks = new URL(import.meta.url.endsWith('.ts') ? './module-hooks.ts' : './module-hooks.js', import.meta.url)
  try {
    register(hooks, { data })
  } catch (error) {
    // From source under a runner that transpiles TypeScript itself (vitest), Node cannot load
    // the .ts hooks file, and the runner resolves and transpiles the tools anyway.
    if (hooks.pathname.endsWith('.ts') && (error as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_FILE_EXTENSION') return false
    throw error
  }
  return true
}

function hasTypeScript (dir: string): boolean {
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return false // the loader reports an unreadable folder with its own message
  }
  return entries.some(entry => entry.name !== 'node_modules' && (entry.isDirectory()
    ? hasTypeScript(join(dir, entry.name))
    : TYPESCRIPT.has(extname(entry.name)) && !/\.d\.[cm]?ts$/.test(entry.name)))
}

function resolvesFrom (dir: string, name: string): boolean {
  try {
    createRequire(join(resolve(dir), 'index.js')).resolve(name)
    return true
  } catch {
    return false
  }
}

/** The gateway's package.json: `src/services/loading/` in the clone, `dist/src/services/loading/` in the package. */
function packageJsonUrl (): string {
  const compiled = import.meta.url.endsWith('/dist/src/services/loading/tool-hooks.js')
  return new URL(compiled ? '../../../../package.json' : '../../../package.json', import.meta.url).href
}
