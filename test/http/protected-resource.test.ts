import { beforeAll, describe, expect, it } from 'vitest'
import { AUDIENCE, esKeys, ISSUER, sign, type EsKeys } from '../services/auth/helpers.js'
import { testApp } from './helpers.js'

let keys: EsKeys
beforeAll(async () => { keys = await esKeys() })

const jwtApp = () => testApp({ apiKeys: [], jwt: { issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'], key: keys.pem } })
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: 'gw.example:8443' }
const listTools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })

describe('OAuth protected resource metadata (RFC 9728) when JWT is configured', () => {
  it('serves the metadata of the gateway and of /mcp, naming the issuer as authorization server', async () => {
    const app = await jwtApp()
    const root = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource', headers: { host: 'gw.example:8443' } })
    expect(root.statusCode).toBe(200)
    expect(root.json()).toMatchObject({ resource: 'http://gw.example:8443', authorization_servers: [ISSUER], scopes_supported: ['tools:read', 'tools:call', 'tools:approve'], bearer_methods_supported: ['header'] })
    const mcp = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp', headers: { host: 'gw.example:8443' } })
    expect(mcp.json().resource).toBe('http://gw.example:8443/mcp')
  })

  it('points the 401 challenge at the metadata: /mcp at its own document, the tool routes at the gateway\'s', async () => {
    const app = await jwtApp()
    const mcp = await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: listTools })
    expect(mcp.statusCode).toBe(401)
    expect(mcp.headers['www-authenticate']).toBe('Bearer realm="toolgate", resource_metadata="http://gw.example:8443/.well-known/oauth-protected-resource/mcp"')
    const rest = await app.inject({ method: 'POST', url: '/tools/echo', headers: { host: 'gw.example:8443' }, payload: { text: 'x' } })
    expect(rest.headers['www-authenticate']).toContain('resource_metadata="http://gw.example:8443/.well-known/oauth-protected-resource"')
  })

  it('answers a token without the needed scope with 403 insufficient_scope, and the metadata', async () => {
    const app = await jwtApp()
    const token = await sign(keys.privateKey, { scope: 'tools:read' })
    const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } })
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, payload: call })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toMatch(/error="insufficient_scope".*scope="tools:call".*resource_metadata=/)
  })

  it('serves no metadata when JWT is not configured', async () => {
    const app = await testApp()
    expect((await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' })).statusCode).toBe(404)
  })
})
