#!/usr/bin/env node
/**
 * The `toolgate` command: one subcommand per file in `commands/`. Exit codes: 0 done, 1 the
 * work failed (a setting, a tool file, a declaration: the message names it), 2 a usage mistake.
 */
import { VERSION } from '../src/services/version.js'
import { EXIT, isUserFacing, parse, UsageError, type Command } from './command.js'
import { audit } from './commands/audit.js'
import { hashKey } from './commands/hash-key.js'
import { list } from './commands/list.js'
import { mcp } from './commands/mcp.js'
import { openapi } from './commands/openapi.js'
import { serve } from './commands/serve.js'

const COMMANDS: readonly Command[] = [serve, openapi, list, hashKey, mcp, audit]

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
  const command = COMMANDS.find(c => c.name === first)
  if (command === undefined) throw new UsageError(`unknown command "${first}"`)
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
})
