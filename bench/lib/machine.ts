/** What the numbers were measured on, for the JSON file and the table's heading. */
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { PINNED, LOAD_CORE, SERVER_CORE } from './processes.js'

const PACKAGES = ['fastify', 'fastify-type-provider-zod', 'zod', 'prom-client', '@modelcontextprotocol/sdk', '@hono/zod-openapi', 'hono', '@hono/node-server', 'autocannon', 'esbuild']

export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly node: string
  readonly pinning: string
  readonly versions: Readonly<Record<string, string>>
}

export function describeMachine (): Machine {
  const versions: Record<string, string> = {}
  for (const name of PACKAGES) {
    try { versions[name] = (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version } catch {}
  }
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    pinning: PINNED ? `servers on core ${SERVER_CORE}, load generator on core ${LOAD_CORE} (taskset)` : 'none (no taskset or one core)',
    versions,
  }
}
