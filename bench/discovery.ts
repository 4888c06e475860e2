/**
 * Discovery mode measured on the evaluation set of bench/discovery (about 500 real tools and 50
 * plain-language tasks written without the engine): the bytes of the full MCP `tools/list`
 * against the discovery listing, how often `search_tools`, given a task's text as it is, ranks
 * the intended tool first and among the first five, which tasks miss, and search latency on
 * that catalog and on 5,000 tools. Discovery answers come from the same protocol object the
 * endpoints use, over the gateway's live catalog (the full listing over `POST /mcp`).
 *
 *   npm run bench:discovery [-- --rounds 20]
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { DISCOVERY_TASKS, mcpToolsList, startDiscoveryCatalog, type DiscoveryTask } from './discovery/catalog.js'
import { namedTools } from './generated-tools.js'
import { ownNamesOf, type NamedTool } from '../src/core/bundles/named-tool.js'
import { McpProtocol, type McpCaller } from '../src/services/mcp/protocol.js'
import { toolSearchOf } from '../src/services/search/tool-search.js'
import { queryOf } from '../src/services/search/query.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } })
const ROUNDS = Number(values.rounds)
const tasks = JSON.parse(readFileSync(DISCOVERY_TASKS, 'utf8')) as DiscoveryTask[]
const everyone = (): boolean => true

/** A caller that may see every tool, in discovery mode; nothing here runs a tool. */
function discoveryCaller (all: readonly NamedTool[]): McpCaller {
  return {
    principalId: 'bench',
    discovery: true,
    tools: () => all,
    all: () => all,
    get: name => all.find(named => named.name === name),
    invoke: () => { throw new Error('the bench calls no tool') },
    problemOf: error => ({ status: error.status, detail: error.message }),
  }
}

/** Milliseconds of each search of `queries`, `rounds` times over, after one search that builds the index. */
function latencies (all: readonly NamedTool[], timeoutMs: number, queries: readonly string[], rounds: number): { build: number, times: number[] } {
  const search = toolSearchOf(all, timeoutMs)
  let started = performance.now()
  search.search('build the index', { limit: 5, visible: everyone })
  const build = performance.now() - started
  const times: number[] = []
  for (let round = 0; round < rounds; round++) {
    for (const query of queries) {
      started = performance.now()
      search.search(query, { limit: 5, visible: everyone })
      times.push(performance.now() - started)
    }
  }
  return { build, times: times.sort((a, b) => a - b) }
}

function quantile (sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

function latencyLine (label: string, { build, times }: { build: number, times: number[] }): string {
  return `${label}: median ${quantile(times, 0.5).toFixed(2)} ms, p99 ${quantile(times, 0.99).toFixed(2)} ms over ${times.length} searches (index built in ${build.toFixed(0)} ms on the first)`
}

const catalog = await startDiscoveryCatalog()
try {
  const { app } = catalog
  const timeoutMs = app.catalog.options.defaultTimeoutMs
  const all = ownNamesOf(app.catalog.tools)
  const protocol = new McpProtocol({ name: 'toolgate', version: 'bench', defaultTimeoutMs: timeoutMs })
  const caller = discoveryCaller(all)

  const full = await mcpToolsList(app)
  const listing = await protocol.handle({ id: 1, method: 'tools/list', params: {} }, caller)
  const discoveryBytes = Buffer.byteLength(listing!.text)
  console.log(`catalog: ${all.length} tools (${full.tools.length} listed over MCP)`)
  console.log(`tools/list: ${full.bytes} bytes in full, ${discoveryBytes} bytes in discovery mode (${(full.bytes / discoveryBytes).toFixed(0)}x smaller)`)

  let first = 0
  let topFive = 0
  const misses: string[] = []
  for (const { task, tool } of tasks) {
    const result = JSON.parse(await protocol.callTool({ name: 'search_tools', arguments: { query: task, limit: 25 } }, caller)) as { isError: boolean, structuredContent?: { tools: Array<{ name: string }> } }
    if (result.isError) throw new Error(`search_tools refused the task "${task}": ${JSON.stringify(result)}`)
    const names = result.structuredContent!.tools.map(hit => hit.name)
    const rank = names.indexOf(tool) + 1
    if (rank === 1) first++
    if (rank >= 1 && rank <= 5) topFive++
    else misses.push(`  - "${task}" → ${tool}: ${rank === 0 ? 'not in the first 25' : `rank ${rank}`}; first: ${names.slice(0, 3).join(', ')}`)
  }
  const percent = (n: number): string => `${(100 * n / tasks.length).toFixed(0)} %`
  console.log(`recall@5: ${topFive}/${tasks.length} (${percent(topFive)}), recall@1: ${first}/${tasks.length} (${percent(first)}), each task's text as the query`)
  if (misses.length > 0) console.log(`missed (not in the first five):\n${misses.join('\n')}`)

  const queries = tasks.map(({ task }) => queryOf(task))
  // A copy of the array: an index of its own, so that its building is timed too.
  console.log(latencyLine(`search, ${all.length} tools`, latencies([...all], timeoutMs, queries, ROUNDS)))
  // The real catalog eleven times over, each copy under other names: real text at ten times the size.
  const copies = Array.from({ length: Math.ceil(5_000 / all.length) }, (_, copy) => all.map(named => ({ ...named, name: `${named.name}_${copy}` }))).flat().slice(0, 5_000)
  console.log(latencyLine('search, 5,000 tools (the catalog copied under other names)', latencies(copies, timeoutMs, queries, ROUNDS)))
  console.log(latencyLine('search, 5,000 generated tools', latencies(namedTools(5_000), timeoutMs, queries, ROUNDS)))
} finally {
  await catalog.close()
}
