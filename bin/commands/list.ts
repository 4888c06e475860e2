import type { AnyTool } from '../../src/index.js'
import { EXIT, type Command } from '../command.js'
import { configAndTools } from './load.js'

export const list: Command = {
  help: `usage: toolgate list [TOOLS_DIR] [--json]

Load the tools in TOOLS_DIR (default: the TOOLS_DIR setting, else ./tools) exactly as serve
does, and print one line per tool: id, kind, declared effects and flags. A tool that fails to
load stops the listing with the file and field named, as serve would.

      --json   one JSON object per tool instead of the table`,
  options: { json: { type: 'boolean' } },
  async run (args) {
    const { config, tools } = await configAndTools(args)
    if (args.values.json === true) {
      for (const tool of tools) process.stdout.write(JSON.stringify(rowOf(tool, config.toolTimeoutMs)) + '\n')
      return EXIT.ok
    }
    const rows = tools.map(tool => rowOf(tool, config.toolTimeoutMs))
    const table = [['ID', 'KIND', 'EFFECTS', 'FLAGS', 'TIMEOUT'], ...rows.map(row => [row.id, row.kind, row.effects.join(',') || 'none', row.flags.join(',') || '-', row.timeout])]
    const widths = table[0]!.map((_, column) => Math.max(...table.map(cells => cells[column]!.length)))
    for (const cells of table) process.stdout.write(cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd() + '\n')
    return EXIT.ok
  },
}

function rowOf (tool: AnyTool, defaultTimeoutMs: number): { id: string, kind: string, effects: string[], flags: string[], timeout: string } {
  const flags = [
    tool.isReadOnly ? 'read-only' : undefined,
    tool.isConcurrencySafe ? 'concurrency-safe' : undefined,
    tool.interactive === true ? 'interactive' : undefined,
    tool.supportsEscalation === true ? 'escalation' : undefined,
    tool.requiresIdempotencyKey === true ? 'idempotency-key' : undefined,
  ].filter((flag): flag is string => flag !== undefined)
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  return { id: tool.id, kind: tool.kind, effects: [...tool.effects], flags, timeout: timeoutMs === Infinity ? 'none' : `${timeoutMs}ms` }
}
