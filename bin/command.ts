import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError } from '../src/services/config.js'
import { ToolLoadError } from '../src/services/loading/loader.js'
import { ToolDefinitionError } from '../src/index.js'
import { StartError } from '../src/services/start-error.js'

/** One `toolgate` subcommand (its name and summary are in toolgate.ts). `run` resolves to the exit code. */
export interface Command {
  /** The whole `toolgate NAME --help` text. */
  readonly help: string
  readonly options?: ParseArgsConfig['options']
  run (args: ParsedArgs): Promise<number>
}

export interface ParsedArgs {
  readonly positionals: readonly string[]
  readonly values: Readonly<Record<string, string | boolean | undefined>>
}

/** A mistake in how the command was called: printed with a pointer to `--help`, exit 2. */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

export function parse (command: Command, argv: readonly string[]): ParsedArgs {
  try {
    const { positionals, values } = parseArgs({ args: [...argv], options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' }, ...command.options }, allowPositionals: true, strict: true })
    return { positionals, values: values as ParsedArgs['values'] }
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** Failures a user can fix (a setting, a tool file, a declaration) print their message, not a stack. */
export function isUserFacing (error: unknown): error is Error {
  return error instanceof ConfigError || error instanceof ToolLoadError || error instanceof ToolDefinitionError || error instanceof UsageError || error instanceof StartError
}

/** At most one positional: the tools folder. */
export function toolsDirOf (args: ParsedArgs): string | undefined {
  if (args.positionals.length > 1) throw new UsageError(`expected at most one TOOLS_DIR, got ${args.positionals.length} arguments`)
  return args.positionals[0]
}
