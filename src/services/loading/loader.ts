import { realpathSync, statSync, type Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { extname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { helpersFingerprint, versionedUrl } from './module-versions.js'
import { registerToolHooks } from './tool-hooks.js'
import { defineTool } from '../../core/define-tool.js'
import { ToolDefinitionError } from '../../core/errors.js'
import { isDefinedTool, type AnyTool, type ToolDeclaration } from '../../core/tool.js'

const MODULE_EXTENSIONS = new Set(['.ts', '.js', '.mts', '.mjs'])

export class ToolLoadError extends Error {
  constructor (readonly file: string, problem: string, options?: ErrorOptions) {
    super(`cannot load tool module ${file}: ${problem}`, options)
    this.name = 'ToolLoadError'
  }
}

/**
 * Load every tool module at the top level of `dir` (sub-folders hold helpers and are not
 * read), in file-name order so the catalog order is stable. A module's default export is one
 * tool or an array of tools, each a `defineTool` result or a plain declaration. Loading the
 * same folder again gives the same declarations for the modules that did not change, and
 * fresh ones for those that did (a reload).
 */
export async function loadToolsFromDir (dir: string): Promise<AnyTool[]> {
  const root = realRoot(dir)
  let entries
  try {
    entries = await readdir(root, { withFileTypes: true })
  } catch (error) {
    throw new ToolLoadError(root, `the tools folder cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }
  const files = entries
    .filter(entry => isFileOrLinkToOne(root, entry) && MODULE_EXTENSIONS.has(extname(entry.name)) && !entry.name.endsWith('.d.ts') && !entry.name.includes('.test.'))
    .map(entry => join(root, entry.name))
    .sort()
  const helpers = helpersFingerprint(root)
  const tools: AnyTool[] = []
  for (const file of files) {
    const { url, freshHelpers } = versionedUrl(file, root, helpers, failures.get(file) ?? 0)
    // Changed helpers are reached through the module hooks only (see versionedUrl).
    if (freshHelpers) registerToolHooks()
    try {
      tools.push(...await loadToolModule(file, url).catch(async (error: unknown) => {
        // A folder that needed no module hooks at start-up may now (its first .ts file, an
        // import of toolgate or zod): install them and try once more, under a new URL.
        if (!needsHooks(error) || !registerToolHooks()) throw error
        return await loadToolModule(file, versionedUrl(file, root, helpers, (failures.get(file) ?? 0) + 1).url)
      }))
      failures.delete(file)
    } catch (error) {
      // Node keeps a failed import under its URL: the next try needs another one, or a cause
      // outside the file (a package installed since, a data file written) could never clear.
      failures.set(file, (failures.get(file) ?? 0) + 1)
      throw error
    }
  }
  return tools
}

const failures = new Map<string, number>()

function needsHooks (error: unknown): boolean {
  const code = ((error as { cause?: { code?: unknown } }).cause)?.code
  return code === 'ERR_UNKNOWN_FILE_EXTENSION' || code === 'ERR_MODULE_NOT_FOUND'
}

/** The folder's real path: Node names modules by theirs, and the module hooks compare the two. */
function realRoot (dir: string): string {
  try {
    return realpathSync(resolve(dir))
  } catch {
    return resolve(dir) // missing: the read below says so, with the path as given
  }
}

/** A tool file, or a symbolic link to one (Kubernetes mounts a ConfigMap's files as links). */
function isFileOrLinkToOne (root: string, entry: Dirent): boolean {
  if (entry.isFile()) return true
  if (!entry.isSymbolicLink()) return false
  try {
    return statSync(join(root, entry.name)).isFile()
  } catch {
    return false
  }
}

/**
 * Import one tool module and define its tools. `url` is what to import it by (default: the
 * file's own URL); `loadToolsFromDir` passes a versioned one, so a folder can be loaded again.
 */
export async function loadToolModule (file: string, url = pathToFileURL(file).href): Promise<AnyTool[]> {
  let module: { default?: unknown }
  try {
    module = await import(url) as { default?: unknown }
  } catch (error) {
    throw new ToolLoadError(file, `import failed: ${(error as Error).message ?? String(error)}`, { cause: error })
  }
  const exported = module.default
  if (exported === undefined) throw new ToolLoadError(file, 'it has no default export (export default a tool or an array of tools)')
  const items: unknown[] = Array.isArray(exported) ? exported : [exported]
  if (items.length === 0) throw new ToolLoadError(file, 'its default export is an empty array')
  return items.map(item => {
    // A module loaded again (it did not change) exports the same objects: they give the same tools.
    const known = item !== null && typeof item === 'object' ? defined.get(item) : undefined
    if (known !== undefined) return known
    const tool = toolOf(item, file)
    if (item !== null && typeof item === 'object') defined.set(item, tool)
    return tool
  })
}

const defined = new WeakMap<object, AnyTool>()

function toolOf (item: unknown, file: string): AnyTool {
  if (isDefinedTool(item)) return item.source === undefined ? withSource(item, file) : item
  try {
    return defineTool(item as ToolDeclaration, { source: file })
  } catch (error) {
    if (error instanceof ToolDefinitionError) throw error
    throw new ToolLoadError(file, (error as Error).message, { cause: error })
  }
}

/** The same frozen tool, now naming its file; descriptors are copied so getters stay live. */
function withSource (tool: AnyTool, file: string): AnyTool {
  const descriptors = { ...Object.getOwnPropertyDescriptors(tool), source: { value: file, enumerable: true } }
  return Object.freeze(Object.defineProperties({}, descriptors)) as AnyTool
}
