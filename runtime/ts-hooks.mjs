/**
 * Node module hooks that run this repository's TypeScript sources directly, for the benchmark
 * and the few tests that start a process from source: `.js` specifiers that name a `.ts`
 * source resolve to it, `toolgate` and `toolgate/server` resolve to the sources (as tsconfig's
 * `paths` and vitest's aliases do), and `.ts` files are stripped to JavaScript by esbuild.
 * Unlike tsx, nothing is added to the code (tsx's `keepNames` wraps every closure in a
 * `__name()` call, about 3 µs per request). Production runs the compiled package instead.
 */
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

const TS = /\.(c|m)?ts$/
const SOURCES = {
  toolgate: new URL('../src/index.ts', import.meta.url).href,
  'toolgate/server': new URL('../plugins/index.ts', import.meta.url).href,
}

export async function resolve (specifier, context, nextResolve) {
  if (Object.hasOwn(SOURCES, specifier)) return { url: SOURCES[specifier], shortCircuit: true }
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:')
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !relative || !specifier.endsWith('.js')) throw error
    return await nextResolve(`${specifier.slice(0, -3)}.ts`, context)
  }
}

export async function load (url, context, nextLoad) {
  if (!url.startsWith('file:') || !TS.test(new URL(url).pathname)) return await nextLoad(url, context)
  const path = fileURLToPath(url)
  const { code } = await transform(await readFile(path, 'utf8'), {
    loader: 'ts', format: 'esm', target: 'node20', sourcefile: path, sourcemap: 'inline',
  })
  return { format: 'module', source: code, shortCircuit: true }
}
