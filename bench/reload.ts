/**
 * What a live catalog costs: memory over many reloads, and a large replacement under load.
 *
 *   npx tsx bench/reload.ts [RELOADS]
 *
 * 1. RSS and heap after RELOADS (default 200) reloads of the shipped tools folder, unchanged,
 *    then after as many reloads that each change one tool file (a copy of the folder).
 * 2. Replacing 1000 tools with 1000 new ones while clients call a tool over HTTP: how long the
 *    replacement takes, and how many calls were answered other than 200 meanwhile (none should).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import { buildApp } from '../plugins/app.js'
import { defineTool, type AnyTool } from '../src/index.js'
import { loadConfig } from '../src/services/config.js'
import { loadToolsFromDir } from '../src/services/loading/loader.js'
import { prepareToolsDir } from '../src/services/loading/tool-hooks.js'

const reloads = Number(process.argv[2] ?? 200)
const shipped = fileURLToPath(new URL('../tools', import.meta.url))
const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1)
const settle = (): void => { (globalThis as { gc?: () => void }).gc?.() }

async function memoryOver (dir: string, edit?: (round: number) => void): Promise<string[]> {
  prepareToolsDir(dir)
  const app = await buildApp({ config: loadConfig({}, { toolsDir: dir }), tools: await loadToolsFromDir(dir), toolsDir: dir })
  await app.ready()
  const lines: string[] = []
  const sample = (round: number): void => {
    settle()
    const { rss, heapUsed } = process.memoryUsage()
    lines.push(`  after ${String(round).padStart(4)} reloads: rss ${mib(rss)} MiB, heap used ${mib(heapUsed)} MiB`)
  }
  sample(0)
  for (let round = 1; round <= reloads; round++) {
    edit?.(round)
    await app.reloadTools()
    if (round % (reloads / 4) === 0) sample(round)
  }
  await app.close()
  return lines
}

function manyTools (count: number, version: number): AnyTool[] {
  return Array.from({ length: count }, (_, i) => defineTool({
    id: `tool_${i}`, kind: 'read', description: `Tool ${i}, version ${version}.`,
    inputSchema: z.object({ text: z.string().max(100), count: z.number().int().optional() }), outputSchema: z.object({ text: z.string() }),
    isReadOnly: true, isConcurrencySafe: true, authorize () {}, execute: ({ text }) => ({ text }),
  }) as AnyTool)
}

async function largeReplacement (): Promise<string[]> {
  const app = await buildApp({ config: loadConfig({}, {}), tools: manyTools(1000, 1) })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  let answered = 0
  const refused = new Map<number, number>()
  let running = true
  const client = async (): Promise<void> => {
    while (running) {
      const res = await fetch(`${address}/tools/tool_7`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"a"}' })
      await res.arrayBuffer()
      if (res.status === 200) answered++
      else refused.set(res.status, (refused.get(res.status) ?? 0) + 1)
    }
  }
  const clients = Array.from({ length: 8 }, client)
  await new Promise(resolve => setTimeout(resolve, 500))
  const before = answered
  const durations: number[] = []
  for (let version = 2; version <= 4; version++) {
    const started = performance.now()
    await app.replaceTools(manyTools(1000, version))
    durations.push(performance.now() - started)
  }
  const during = answered - before
  running = false
  await Promise.all(clients)
  const document = await (await fetch(`${address}/openapi.json`)).json() as { paths: Record<string, unknown> }
  await app.close()
  return [
    `  replacing 1000 tools, three times: ${durations.map(ms => `${ms.toFixed(0)} ms`).join(', ')}`,
    `  calls answered 200 meanwhile: ${during}; answered otherwise: ${refused.size === 0 ? 'none' : JSON.stringify(Object.fromEntries(refused))}`,
    `  the document afterwards: ${Object.keys(document.paths).filter(path => path.startsWith('/tools/tool_')).length} tool operations`,
  ]
}

console.log(`node ${process.version}${(globalThis as { gc?: unknown }).gc === undefined ? ' (run with --expose-gc for settled figures)' : ', gc before each sample'}`)
console.log(`1a. ${reloads} reloads of the shipped tools folder, nothing changed:`)
console.log((await memoryOver(shipped)).join('\n'))
const copy = mkdtempSync(join(tmpdir(), 'toolgate-reload-'))
cpSync(shipped, copy, { recursive: true })
const edited = join(copy, 'time-now.ts')
const original = readFileSync(edited, 'utf8')
console.log(`1b. ${reloads} reloads of a copy, each after an edit of one tool file (time-now.ts):`)
console.log((await memoryOver(copy, round => { writeFileSync(edited, `${original}\n// edit ${round}\n`) })).join('\n'))
rmSync(copy, { recursive: true, force: true })
console.log('2. a replacement of 1000 tools while 8 clients call a tool:')
console.log((await largeReplacement()).join('\n'))
