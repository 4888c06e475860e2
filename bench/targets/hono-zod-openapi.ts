/**
 * A peer: @hono/zod-openapi on @hono/node-server. It validates the request only, so the
 * handler parses the output itself to do the same work as the others.
 */
import { serve } from '@hono/node-server'
import { createRoute, OpenAPIHono } from '@hono/zod-openapi'
import { announce } from './announce.js'
import { echo, ECHO_PATH, EchoInput, EchoOutput } from './echo.js'

const route = createRoute({
  method: 'post',
  path: ECHO_PATH,
  request: { body: { content: { 'application/json': { schema: EchoInput } }, required: true } },
  responses: { 200: { content: { 'application/json': { schema: EchoOutput } }, description: 'The text and its length' } },
})

const app = new OpenAPIHono()
app.openapi(route, c => c.json(EchoOutput.parse(echo(c.req.valid('json'))), 200))

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, info => { announce(info.port) })
