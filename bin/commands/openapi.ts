import { writeFile } from 'node:fs/promises'
import { openApiDocument } from '../../plugins/openapi/document.js'
import { EXIT, type Command } from '../command.js'
import { toolsOnce } from './load.js'

export const openapi: Command = {
  help: `usage: toolgate openapi [TOOLS_DIR] [--output FILE]

Print the OpenAPI 3.1 document that GET /openapi.json serves for the tools in TOOLS_DIR
(default: the TOOLS_DIR setting, else ./tools), for CI checks and client generation.

  -o, --output FILE   write it to FILE instead of standard output`,
  options: { output: { type: 'string', short: 'o' } },
  async run (args) {
    const { config, tools } = await toolsOnce(args)
    const text = JSON.stringify(await openApiDocument(config, tools), null, 2) + '\n'
    const output = args.values.output
    if (typeof output === 'string') await writeFile(output, text)
    else process.stdout.write(text)
    return EXIT.ok
  },
}
