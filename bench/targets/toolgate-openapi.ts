/**
 * toolgate fronting the JSON endpoint at `UPSTREAM_URL` through its OpenAPI document
 * (`svc_get_item`); `UPSTREAM_HEADERS` and `UPSTREAM_AUTH` (JSON) are the service's `headers`
 * and `auth` (the credential bench compares them).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { announce } from './announce.js'
import { ITEM_DOCUMENT } from './json-endpoint.js'
import { buildBenchGateway } from './toolgate-app.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-openapi-'))
writeFileSync(join(dir, 'items.json'), JSON.stringify(ITEM_DOCUMENT))
const headers = process.env.UPSTREAM_HEADERS === undefined ? {} : { headers: JSON.parse(process.env.UPSTREAM_HEADERS) as unknown }
const auth = process.env.UPSTREAM_AUTH === undefined ? {} : { auth: JSON.parse(process.env.UPSTREAM_AUTH) as unknown }
writeFileSync(join(dir, 'upstreams.json'), JSON.stringify({ openapi: { svc: { document: './items.json', baseUrl: process.env.UPSTREAM_URL, maxInFlight: 64, ...headers, ...auth } } }))
const app = await buildBenchGateway(0, { upstreamsFile: join(dir, 'upstreams.json') }, [])
await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
