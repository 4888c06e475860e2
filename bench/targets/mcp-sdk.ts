/**
 * A peer: the official MCP TypeScript SDK, stateless Streamable HTTP with JSON responses, a new
 * server and transport per request as the SDK's stateless example does. The host is bare
 * node:http rather than the example's Express app, so this measures the SDK and nothing more.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'
import { echo, EchoInput, EchoOutput } from './echo.js'

export const MCP_PATH = '/mcp'

function mcpServer (): McpServer {
  const server = new McpServer({ name: 'bench-echo', version: '1.0.0' })
  server.registerTool('echo', {
    description: 'Echo the text back with its length.',
    inputSchema: EchoInput.shape,
    outputSchema: EchoOutput.shape,
  }, async input => {
    const output = echo(input)
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output }
  })
  return server
}

async function readJson (req: IncomingMessage): Promise<unknown> {
  let body = ''
  req.setEncoding('utf8')
  for await (const chunk of req) body += chunk as string
  return JSON.parse(body)
}

async function handle (req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || req.url !== MCP_PATH) {
    res.writeHead(405).end()
    return
  }
  const body = await readJson(req)
  const server = mcpServer()
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  res.on('close', () => { void transport.close(); void server.close() })
  await server.connect(transport)
  await transport.handleRequest(req, res, body)
}

const http = createServer((req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
    res.end('{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal server error"},"id":null}')
  })
})
http.listen(0, '127.0.0.1', () => { announce((http.address() as AddressInfo).port) })
