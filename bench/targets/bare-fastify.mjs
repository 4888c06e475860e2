/* global process, console */
// The idle-memory baseline: one Fastify route with fastify-type-provider-zod, plain JavaScript
// run by plain node (no loader, no hooks thread), listening on the port in argv[2].
import Fastify from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import { z } from 'zod'

const app = Fastify({ logger: false })
app.setValidatorCompiler(validatorCompiler)
app.setSerializerCompiler(serializerCompiler)
const Echo = z.object({ text: z.string() })
app.post('/echo', { schema: { body: Echo, response: { 200: Echo } } }, async request => request.body)
await app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) })
console.log(JSON.stringify({ address: `http://127.0.0.1:${app.server.address().port}` }))
