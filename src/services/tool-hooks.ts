import { register } from 'node:module'
import type { ToolHooksData } from './module-hooks.js'

let registered = false

/**
 * Install the module hooks a tools folder needs (TypeScript tools, `toolgate` and `zod` from
 * the gateway's own package) before the folder is imported. Once per process.
 */
export function registerToolHooks (): void {
  if (registered) return
  registered = true
  const data: ToolHooksData = { gatewayUrl: packageJsonUrl() }
  // In the clone, from source (tsx, vitest), the hooks file is TypeScript; in the package it is compiled.
  const hooks = new URL(import.meta.url.endsWith('.ts') ? './module-hooks.ts' : './module-hooks.js', import.meta.url)
  register(hooks, { data })
}

/** The gateway's package.json: `src/services/` in the clone, `dist/src/services/` in the package. */
function packageJsonUrl (): string {
  const compiled = import.meta.url.endsWith('/dist/src/services/tool-hooks.js')
  return new URL(compiled ? '../../../package.json' : '../../package.json', import.meta.url).href
}
