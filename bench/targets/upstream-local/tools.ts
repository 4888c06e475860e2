import { z } from 'zod'
import { defineTool } from 'toolgate'

/*
 * bench/upstream-mcp.ts: the gateway's own floor, a local tool answering what server-everything's
 * `echo` answers, declared as the upstream one is (not read-only: calls of a session in turn).
 */
export default [
  defineTool({
    id: 'echo', kind: 'bench', description: 'Echoes the message back, as MCP text content.', isReadOnly: false, isConcurrencySafe: false, authorize () {},
    inputSchema: z.object({ message: z.string() }),
    outputSchema: z.object({ content: z.array(z.looseObject({ type: z.string() })) }),
    execute: ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }),
  }),
]
