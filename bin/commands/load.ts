import type { AnyTool } from '../../src/index.js'
import { loadConfig, type Config } from '../../src/services/config.js'
import { loadToolsFromDir } from '../../src/services/loader.js'
import { prepareToolsDir } from '../../src/services/tool-hooks.js'
import { toolsDirOf, type ParsedArgs } from '../command.js'

/**
 * Configuration and tools for a command that never listens (`openapi`, `list`): the listening
 * address is irrelevant there, so a non-loopback HOST without credentials is no reason to stop.
 */
export async function configAndTools (args: ParsedArgs): Promise<{ config: Config, tools: AnyTool[] }> {
  const toolsDir = toolsDirOf(args)
  const config = loadConfig(process.env, { host: '127.0.0.1', ...(toolsDir === undefined ? {} : { toolsDir }) })
  prepareToolsDir(config.toolsDir)
  return { config, tools: await loadToolsFromDir(config.toolsDir) }
}
