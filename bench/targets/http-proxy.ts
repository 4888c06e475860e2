/** The bare reverse proxy: Fastify with @fastify/http-proxy in front of `UPSTREAM_URL`, validating nothing. */
import Fastify from 'fastify'
import proxy from '@fastify/http-proxy'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'

const app = Fastify({ logger: false })
await app.register(proxy, { upstream: process.env.UPSTREAM_URL!, prefix: '/items', rewritePrefix: '/items' })
await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
