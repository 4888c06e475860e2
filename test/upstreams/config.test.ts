import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { TOOL_ID } from '../../src/core/define-tool.js'
import { parseUpstreams } from '../../src/services/upstreams/file.js'
import { idPartOf, upstreamToolId } from '../../src/services/upstreams/names.js'
import { compileRule } from '../../src/services/upstreams/rules.js'

const parse = (raw: unknown, env: NodeJS.ProcessEnv = {}) => parseUpstreams(raw, 'mcp.json', env)

describe('the upstreams file', () => {
  it('reads the mcpServers format as Claude Desktop and Cursor write it: stdio and remote servers', () => {
    const file = parse({
      mcpServers: {
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { LEVEL: 'debug' } },
        remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer abc' } },
        old: { type: 'sse', url: 'https://mcp.example.com/sse' },
        code: { type: 'http', url: 'https://mcp.example.com/mcp' },
        off: { command: 'nothing', disabled: true },
      },
    })
    expect(file.servers.map(server => [server.name, server.transport])).toEqual([['everything', 'stdio'], ['remote', 'http'], ['old', 'sse'], ['code', 'http']])
    expect(file.servers[0]).toMatchObject({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { LEVEL: 'debug' }, required: false, maxInFlight: 16 })
  })

  it('takes ${NAME} from the environment in env, headers, args and url, and keeps every value it took as a secret', () => {
    const file = parse({
      mcpServers: {
        gh: { command: 'gh-mcp', args: ['--org', '${ORG}'], env: { GITHUB_TOKEN: '${GH_TOKEN}' } },
        api: { url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${API_TOKEN}' } },
      },
    }, { ORG: 'acme', GH_TOKEN: 'ghp_secret_value', HOST: 'mcp.acme.dev', API_TOKEN: 'tok_123456789' })
    expect(file.servers[0]).toMatchObject({ args: ['--org', 'acme'], env: { GITHUB_TOKEN: 'ghp_secret_value' } })
    expect(file.servers[0]!.secrets).toContain('ghp_secret_value')
    expect(file.servers[1]).toMatchObject({ url: 'https://mcp.acme.dev/mcp', headers: { Authorization: 'Bearer tok_123456789' } })
    expect(file.servers[1]!.secrets).toContain('tok_123456789')
  })

  it.each([
    [{ mcpServers: { gh: { command: 'x', env: { T: '${UNSET_TOKEN}' } } } }, 'mcpServers.gh.env.T: ${UNSET_TOKEN} is not set'],
    [{ mcpServers: { gh: { command: 'x', colour: 'red' } } }, 'mcpServers.gh: unknown key "colour"'],
    [{ mcpServers: { gh: { command: 'x', args: 'not-a-list' } } }, 'mcpServers.gh.args:'],
    [{ mcpServers: { gh: { command: 'x', url: 'https://a.example' } } }, 'mcpServers.gh: has both "command" and "url"'],
    [{ mcpServers: { gh: { url: 'file:///etc/passwd' } } }, 'mcpServers.gh.url: must be an http:// or https:// URL'],
    [{ mcpServers: { gh: { type: 'websocket', url: 'https://a.example' } } }, 'mcpServers.gh.type:'],
    [{ mcpServers: {}, extra: 1 }, '(root): unknown key "extra"'],
    [{ mcpServers: { a: { command: 'x' } }, rename: { 'b/tool': 'b_tool' } }, 'rename.b/tool: there is no server "b"'],
    [{ mcpServers: { a: { command: 'x' } }, rename: { 'a/tool': 'Bad-Id' } }, 'rename.a/tool: a tool id'],
    [{ mcpServers: { a: { command: 'x' } }, tools: { a_x: { effects: ['explosive'] } } }, 'tools.a_x.effects.0'],
    [{ mcpServers: { a: { command: 'x' } }, tools: { a_x: { isReadOnly: 'yes' } } }, 'tools.a_x.isReadOnly'],
    [{ mcpServers: { a: { command: 'x' } }, tools: { a_x: { retries: 3 } } }, 'tools.a_x: unknown key "retries"'],
    [{ mcpServers: { a: { command: 'x' } }, prompts: { a_x: { authorize: true } } }, 'prompts.a_x: unknown key "authorize"'],
    [{ mcpServers: { a: { command: 'x' } }, prompts: { 'A-X': { active: false } } }, 'prompts.A-X'],
    [{ mcpServers: { a: { command: 'x' } }, resources: { 'file:///*': { active: 'yes' } } }, undefined],
  ])('refuses bad input, naming the server and the key: %j', (raw, message) => {
    if (message === undefined) expect(() => parse(raw)).not.toThrow()
    else expect(() => parse(raw)).toThrow(message)
  })

  it('refuses an active rule of resources or prompts that does not compile, naming the entry', async () => {
    const { UpstreamFeatures } = await import('../../src/services/upstreams/mcp/features.js')
    const file = parse({ mcpServers: {}, resources: { 'file:///*': { active: 'principal.nope +' } } })
    expect(() => new UpstreamFeatures(file, [])).toThrow('upstreams file: resources["file:///*"].active')
    const typed = parse({ mcpServers: {}, prompts: { 'a_*': { active: 'input.x == 1' } } })
    expect(() => new UpstreamFeatures(typed, [])).toThrow('upstreams file: prompts["a_*"].active')
  })
})

describe('tool ids of upstream tools', () => {
  it('maps {server}_{tool} into the id format', () => {
    expect(upstreamToolId('everything', 'get-sum', {})).toBe('everything_get_sum')
    expect(upstreamToolId('GitHub', 'createIssue', {})).toBe('git_hub_create_issue')
    expect(upstreamToolId('fs', 'read_text_file', {})).toBe('fs_read_text_file')
    expect(upstreamToolId('db', 'run SQL query!', {})).toBe('db_run_sql_query')
    expect(upstreamToolId('everything', 'get-sum', { 'everything/get-sum': 'add_numbers' })).toBe('add_numbers')
    // No valid id: the file's rename must name it.
    expect(upstreamToolId('1password', 'read', {})).toBeUndefined()
  })

  it('shortens a name too long for an id deterministically: what fits, then a digest of the whole name', () => {
    const long = upstreamToolId('s', 'x'.repeat(80), {})!
    expect(long).toMatch(/^s_x{53}_[0-9a-f]{8}$/)
    expect(long).toHaveLength(64)
    expect(upstreamToolId('s', 'x'.repeat(80), {})).toBe(long)
    // Two names sharing their first 70 characters still get two ids.
    expect(upstreamToolId('s', `${'x'.repeat(70)}_a`, {})).not.toBe(upstreamToolId('s', `${'x'.repeat(70)}_b`, {}))
    expect(upstreamToolId('s', 'x'.repeat(80), { [`s/${'x'.repeat(80)}`]: 'chosen' })).toBe('chosen')
  })

  it('is deterministic and only ever answers a valid id (property)', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 12 }).filter(s => /^[A-Za-z]/.test(s)), fc.string({ maxLength: 40 }), (server, tool) => {
      const id = upstreamToolId(server, tool, {})
      expect(upstreamToolId(server, tool, {})).toBe(id)
      if (id !== undefined) expect(id).toMatch(TOOL_ID)
      expect(idPartOf(tool)).toMatch(/^([a-z0-9]+(_[a-z0-9]+)*)?$/)
    }))
  })
})

describe('operator rules in CEL', () => {
  const caller = { id: 'alice', scopes: ['tools:call'] }

  it('compiles once and evaluates over input and principal', () => {
    const rule = compileRule('gh_create_issue', 'requiresApproval', "input.repo.startsWith('acme/') && !('tools:admin' in principal.scopes)")
    if (typeof rule !== 'function') throw new Error('expected a compiled rule')
    expect(rule({ repo: 'acme/site' }, caller)).toBe(true)
    expect(rule({ repo: 'other/site' }, caller)).toBe(false)
    expect(rule({ repo: 'acme/site' }, { id: 'root', scopes: ['tools:admin'] })).toBe(false)
  })

  it.each([
    ['authorize', 'input.repo.startsWith(', 'upstream tool "t": tools.authorize:'],
    ['authorize', 'principal.id', 'tools.authorize: is a string expression; it must be a bool'],
    ['active', "input.repo == 'x'", 'tools.active'],
    ['requiresApproval', 'principal.nope == 1', 'tools.requiresApproval'],
  ] as const)('a syntax or type error fails start-up naming the tool and field: %s %s', (field, source, message) => {
    expect(() => compileRule('t', field, source)).toThrow(message)
  })

  it('an evaluation error fails closed: inactive, denied, a person decides', () => {
    const missing = 'input.amount > 100'
    const authorize = compileRule('t', 'authorize', missing) as (input: unknown, who: typeof caller) => boolean
    const approval = compileRule('t', 'requiresApproval', missing) as (input: unknown, who: typeof caller) => boolean
    const active = compileRule('t', 'active', "principal.scopes[5] == 'x'") as (input: unknown, who: typeof caller) => boolean
    expect(authorize({}, caller)).toBe(false)
    expect(authorize({ amount: 'lots' }, caller)).toBe(false)
    expect(approval({}, caller)).toBe(true)
    expect(active(undefined, caller)).toBe(false)
    expect(authorize({ amount: 500 }, caller)).toBe(true)
  })
})
