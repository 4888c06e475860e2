#!/usr/bin/env node
/**
 * The `toolgate` command: one subcommand per file in `commands/`. Exit codes: 0 done, 1 the
 * work failed (a setting, a tool file, a declaration: the message names it), 2 a usage mistake.
 */
import { VERSION } from '../src/services/version.js'
import { EXIT, isUserFacing, parse, UsageError, type Command } from './command.js'

interface CommandEntry {
  readonly name: string
  /** One line for `toolgate --help`. */
  readonly summary: string
  readonly load: () => Promise<Command>
}

// A command's module loads only when it runs: `serve` pays for no other command's imports.
const COMMANDS: readonly CommandEntry[] = [
  { name: 'serve', summary: 'serve the tools in TOOLS_DIR over HTTP (REST, OpenAPI, metrics)', load: async () => (await import('./commands/serve.js')).serve },
  { name: 'openapi', summary: 'print the OpenAPI 3.1 document of the tools in TOOLS_DIR', load: async () => (await import('./commands/openapi.js')).openapi },
  { name: 'list', summary: 'list the tools in TOOLS_DIR: id, kind, effects, flags', load: async () => (await import('./commands/list.js')).list },
  { name: 'hash-key', summary: 'print the SHA-256 digest of an API key, the form API_KEYS stores', load: async () => (await import('./commands/hash-key.js')).hashKey },
  { name: 'mcp', summary: 'serve the tools in TOOLS_DIR over MCP on stdin/stdout (desktop hosts)', load: async () => (await import('./commands/mcp.js')).mcp },
  { name: 'audit', summary: 'verify the hash chain of an audit log (AUDIT_LOG)', load: async () => (await import('./commands/audit.js')).audit },
]

const HELP = `usage: toolgate <command> [arguments]

Serve tools declared once (zod schemas, authorize, execute, declared effects) as REST
endpoints with an OpenAPI document and Prometheus metrics.

commands:
${COMMANDS.map(command => `  ${command.name.padEnd(10)} ${command.summary}`).join('\n')}

options:
  -h, --help      this help (or: toolgate <command> --help)
  -v, --version   print the version

Settings come from the environment (HOST, PORT, TOOLS_DIR, API_KEYS, ...) and CONFIG_FILE.`

async function main (argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined) {
    process.stderr.write(HELP + '\n')
    return EXIT.usage
  }
  if (first === '-h' || first === '--help' || first === 'help') {
    process.stdout.write(HELP + '\n')
    return EXIT.ok
  }
  if (first === '-v' || first === '--version') {
    process.stdout.write(`${VERSION}\n`)
    return EXIT.ok
  }
  const entry = COMMANDS.find(c => c.name === first)
  if (entry === undefined) throw new UsageError(`unknown command "${first}"`)
  const command = await entry.load()
  const args = parse(command, rest)
  if (args.values.help === true) {
    process.stdout.write(command.help + '\n')
    return EXIT.ok
  }
  if (args.values.version === true) {
    process.stdout.write(`${VERSION}\n`)
    return EXIT.ok
  }
  return await command.run(args)
}

main(process.argv.slice(2)).then(code => {
  // `serve` keeps running: only a command that finished sets the exit code.
  if (code !== EXIT.ok) process.exitCode = code
}, (error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`toolgate: ${error.message}\nRun 'toolgate --help' for usage.\n`)
    process.exitCode = EXIT.usage
  } else {
    process.stderr.write(`toolgate: ${isUserFacing(error) ? error.message : (error as Error).stack ?? String(error)}\n`)
    process.exitCode = EXIT.failed
  }
  // What failed closed what it had opened, so the process ends by itself; should a handle
  // outlive it anyway, an orchestrator still sees the exit, not a process that neither
  // serves nor stops.
  setTimeout(() => { process.exit() }, 5_000).unref()
})
