import { existsSync } from 'node:fs'
import type { AnyTool } from '../../src/index.js'
import type { Upstreams } from '../../src/services/upstreams/upstreams.js'
import type { UpstreamLog } from '../../src/services/upstreams/status.js'
import { loadConfig, type Config } from '../../src/services/config.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { prepareToolsDir } from '../../src/services/loading/tool-hooks.js'
import { toolsDirOf, type ParsedArgs } from '../command.js'

/**
 * Configuration and tools for a command that never listens (`openapi`, `list`): the listening
 * address is irrelevant there, so a non-loopback HOST without credentials is no reason to stop.
 */
export async function configAndTools (args: ParsedArgs, log: UpstreamLog = quietLog): Promise<{ config: Config, local: AnyTool[], tools: AnyTool[], upstreams?: Upstreams }> {
  const toolsDir = toolsDirOf(args)
  const upstreamsFile = typeof args.values.upstreams === 'string' ? { upstreamsFile: args.values.upstreams } : {}
  const config = loadConfig(process.env, { host: '127.0.0.1', ...(toolsDir === undefined ? {} : { toolsDir }), ...upstreamsFile })
  const upstreamsOnly = config.upstreamsFile !== undefined && toolsDir === undefined && process.env.TOOLS_DIR === undefined && !existsSync(config.toolsDir)
  if (!upstreamsOnly) prepareToolsDir(config.toolsDir)
  const local = upstreamsOnly ? [] : await loadToolsFromDir(config.toolsDir)
  if (config.upstreamsFile === undefined) return { config, local, tools: local }
  const { startUpstreams, upstreamsOptionsOf } = await import('../../src/services/upstreams/upstreams.js')
  const upstreams = await startUpstreams(config.upstreamsFile, upstreamsOptionsOf(config, log))
  return { config, local, tools: [...local, ...upstreams.tools()], upstreams }
}

/** For a command that only reads the tools (`list`, `openapi`): the upstreams are stopped before it returns. */
export async function toolsOnce (args: ParsedArgs): Promise<{ config: Config, tools: AnyTool[] }> {
  const { config, tools, upstreams } = await configAndTools(args)
  await upstreams?.close()
  return { config, tools }
}

/** The servers' own chatter stays out of a listing; their failures reach stderr. */
const quietLog: UpstreamLog = {
  info () {},
  warn (object: object, message: string) { process.stderr.write(`warning: ${message} ${JSON.stringify(object)}\n`) },
  error (object: object, message: string) { process.stderr.write(`error: ${message} ${JSON.stringify(object)}\n`) },
}
