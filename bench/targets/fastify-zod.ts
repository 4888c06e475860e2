/** The stack's limit and the baseline: one Fastify route, fastify-type-provider-zod on both sides. */
import Fastify from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'
import { echo, ECHO_PATH, EchoInput, EchoOutput } from './echo.js'

const app = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>()
app.setValidatorCompiler(validatorCompiler)
app.setSerializerCompiler(serializerCompiler)
app.post(ECHO_PATH, { schema: { body: EchoInput, response: { 200: EchoOutput } } }, async request => echo(request.body))

await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
