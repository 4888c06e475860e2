import { startServer } from '../../plugins/server.js'
import { loadConfig } from '../../src/services/config.js'
import { loadToolsFromDir } from '../../src/services/loader.js'
import { prepareToolsDir } from '../../src/services/tool-hooks.js'
import { EXIT, toolsDirOf, type Command } from '../command.js'

export const serve: Command = {
  help: `usage: toolgate serve [TOOLS_DIR]

Serve every tool module (.ts, .js, .mts, .mjs) at the top level of TOOLS_DIR (default: the
TOOLS_DIR setting, else ./tools) on HOST:PORT (default 127.0.0.1:3000). Every other setting
comes from the environment and CONFIG_FILE, as described in the README. SIGTERM or SIGINT stops
the gateway gracefully (SHUTDOWN_GRACE_MS).

A tools folder with no node_modules of its own may import 'toolgate' and 'zod': they resolve to
the gateway's own copies.`,
  async run (args) {
    const toolsDir = toolsDirOf(args)
    const config = loadConfig(process.env, toolsDir === undefined ? {} : { toolsDir })
    prepareToolsDir(config.toolsDir)
    await startServer({ config, tools: await loadToolsFromDir(config.toolsDir) })
    return EXIT.ok
  },
}
