/**
 * toolgate serving `echo` and `echo_exclusive`, in process or (BENCH_REDIS_URL set) with its
 * concurrency slots in Redis, as replicas run. The load sends every call in one domain (one
 * principal, no session), the worst case for the exclusive tool.
 */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { defineTool } from '../../src/index.js'
import { announce } from './announce.js'
import { echo, EchoInput, EchoOutput } from './echo.js'
import { buildBenchGateway } from './toolgate-app.js'
import { echoTool } from './toolgate-tools.js'

const echoExclusive = defineTool({
  id: 'echo_exclusive', kind: 'write', description: 'Echo the text back, alone in its domain.',
  inputSchema: EchoInput, outputSchema: EchoOutput, isReadOnly: false, isConcurrencySafe: false,
  authorize () {}, execute: echo,
})

const redisUrl = process.env.BENCH_REDIS_URL
const app = await buildBenchGateway(2, redisUrl === undefined || redisUrl === '' ? {} : { redisUrl, redisPrefix: `toolgate:bench:${randomUUID().slice(0, 8)}:` }, [echoTool, echoExclusive])
await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
