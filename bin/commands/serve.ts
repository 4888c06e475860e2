import { existsSync } from 'node:fs'
import { startServer } from '../../plugins/server.js'
import { loadConfig } from '../../src/services/config.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { prepareToolsDir } from '../../src/services/loading/tool-hooks.js'
import { EXIT, toolsDirOf, type Command } from '../command.js'

export const serve: Command = {
  help: `usage: toolgate serve [--watch] [--upstreams FILE] [TOOLS_DIR]

Serve every tool module (.ts, .js, .mts, .mjs) at the top level of TOOLS_DIR (default: the
TOOLS_DIR setting, else ./tools) on HOST:PORT (default 127.0.0.1:3000). Every other setting
comes from the environment and CONFIG_FILE, as docs/configuration.md describes. SIGTERM or SIGINT stops
the gateway gracefully (SHUTDOWN_GRACE_MS).

The tools can change while it serves: SIGHUP loads TOOLS_DIR again (and reads every OpenAPI
document of the upstreams file again), and --watch (or
TOOLS_WATCH=true) does so whenever a file in it is added, changed or removed. A reload that
fails (a syntax error, a bad declaration, a duplicate id) is logged, naming the file and the
field, and the tools that were serving go on serving. Calls in flight finish on the
declaration they started with.

  --watch            reload TOOLS_DIR when a file in it changes
  --upstreams FILE   also serve the tools of the MCP servers and the operations of the HTTP
                     services in FILE (UPSTREAMS_FILE): its "mcpServers" object as Claude
                     Desktop, Cursor and mcpo write it, its "openapi" services, with "rename"
                     and "tools" (the operator's declarations). With upstreams and no TOOLS_DIR
                     given, a missing ./tools folder serves the upstream tools alone.

A tools folder with no node_modules of its own may import 'toolgate' and 'zod': they resolve to
the gateway's own copies.`,
  options: { watch: { type: 'boolean' }, upstreams: { type: 'string' } },
  async run (args) {
    const toolsDir = toolsDirOf(args)
    const upstreams = typeof args.values.upstreams === 'string' ? { upstreamsFile: args.values.upstreams } : {}
    const config = loadConfig(process.env, { ...(toolsDir === undefined ? {} : { toolsDir }), ...upstreams })
    // Upstreams alone: nobody asked for a tools folder, and there is none.
    if (config.upstreamsFile !== undefined && toolsDir === undefined && process.env.TOOLS_DIR === undefined && !existsSync(config.toolsDir)) {
      await startServer({ config, tools: [] })
      return EXIT.ok
    }
    prepareToolsDir(config.toolsDir)
    await startServer({ config, tools: await loadToolsFromDir(config.toolsDir), toolsDir: config.toolsDir, watch: args.values.watch === true || config.toolsWatch })
    return EXIT.ok
  },
}
