/** toolgate serving `echo` (and `BENCH_TOOLS - 1` generated tools) with its production defaults. */
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'
import { buildBenchGateway } from './toolgate-app.js'

const app = await buildBenchGateway(Number(process.env.BENCH_TOOLS ?? 1))
await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
