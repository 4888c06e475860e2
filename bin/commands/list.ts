import type { AnyTool } from '../../src/index.js'
import { EXIT, type Command } from '../command.js'
import { toolsOnce } from './load.js'

export const list: Command = {
  help: `usage: toolgate list [TOOLS_DIR] [--upstreams FILE] [--json]

Load the tools in TOOLS_DIR (default: the TOOLS_DIR setting, else ./tools) exactly as serve
does, and print one line per tool: id, kind, declared effects and flags. A tool that fails to
load stops the listing with the file and field named, as serve would.

With --upstreams (or UPSTREAMS_FILE), the upstream MCP servers are started, their tools listed
with their server and own name, and for each one which of its effects and flags the operator
did not declare (taken from the server's own hints, or the defaults); then they are stopped.

      --json             one JSON object per tool instead of the table
      --upstreams FILE   the upstreams file (see toolgate serve --help)`,
  options: { json: { type: 'boolean' }, upstreams: { type: 'string' } },
  async run (args) {
    const { config, tools } = await toolsOnce(args)
    if (args.values.json === true) {
      for (const tool of tools) process.stdout.write(JSON.stringify(rowOf(tool, config.toolTimeoutMs)) + '\n')
      return EXIT.ok
    }
    const rows = tools.map(tool => rowOf(tool, config.toolTimeoutMs))
    // The upstream columns only when some tool is an upstream's.
    const fronted = rows.some(row => row.upstream !== undefined)
    const table = [
      ['ID', 'KIND', 'EFFECTS', 'FLAGS', 'TIMEOUT', ...(fronted ? ['UPSTREAM', 'NOT DECLARED BY THE OPERATOR'] : [])],
      ...rows.map(row => [row.id, row.kind, row.effects.join(',') || 'none', row.flags.join(',') || '-', row.timeout, ...(fronted ? [row.upstream ?? '-', hintsOf(row)] : [])]),
    ]
    const widths = table[0]!.map((_, column) => Math.max(...table.map(cells => cells[column]!.length)))
    for (const cells of table) process.stdout.write(cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd() + '\n')
    return EXIT.ok
  },
}

/** The effects and flags an upstream tool took from its server's (untrusted) hints or the defaults: `effects=upstream isReadOnly=default`. */
function hintsOf (row: Row): string {
  if (row.declaredBy === undefined) return '-'
  const fields = ['effects', 'isReadOnly', 'isConcurrencySafe'].filter(field => row.declaredBy![field] !== 'operator')
  return fields.map(field => `${field}=${row.declaredBy![field]}`).join(' ') || '-'
}

interface Row { id: string, kind: string, effects: string[], flags: string[], timeout: string, upstream?: string, declaredBy?: Record<string, string> }

function rowOf (tool: AnyTool, defaultTimeoutMs: number): Row {
  const flags = [
    tool.isReadOnly ? 'read-only' : undefined,
    tool.isConcurrencySafe ? 'concurrency-safe' : undefined,
    tool.interactive === true ? 'interactive' : undefined,
    tool.supportsEscalation === true ? 'escalation' : undefined,
    tool.requiresIdempotencyKey === true ? 'idempotency-key' : undefined,
  ].filter((flag): flag is string => flag !== undefined)
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  const row: Row = { id: tool.id, kind: tool.kind, effects: [...tool.effects], flags, timeout: timeoutMs === Infinity ? 'none' : `${timeoutMs}ms` }
  if (tool.origin === undefined) return row
  row.upstream = `${tool.origin.server}/${tool.origin.name}`
  row.declaredBy = { ...tool.origin.declaredBy }
  return row
}
