/**
 * The package as a user gets it: `npm pack`, installed with zod into a fresh project outside
 * the clone, tools written there against the shipped types, served by `npx toolgate serve`,
 * mounted in a bare Fastify app, and the TypeScript examples of the README and docs/ compiled
 * against it.
 * Slow (an npm install), so it runs once, in one file.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentPaths } from '../../scripts/lib/pages.js'
import { SLOW } from '../slow.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tsc = join(root, 'node_modules/typescript/bin/tsc')
/** The lowest zod the peer range allows: the clone's own tests run the locked, newest one. */
const ZOD_FLOOR = '4.2.0'
/** What the examples of the README and docs/ import besides toolgate and zod, at the versions the clone tests. */
const README_EXAMPLE_PACKAGES = ['valibot', '@valibot/to-json-schema', 'arktype', '@modelcontextprotocol/sdk'].map(name => `${name}@${devVersion(name)}`)

let work: string
let project: string
let packed: { filename: string, files: Array<{ path: string }> }

function devVersion (name: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[name]!
}

/** Run a command to its end (tsc, npm), capped at SLOW.COMPILE_MS. */
function sh (command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: SLOW.COMPILE_MS })
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'toolgate-pack-'))
  project = join(work, 'project')
  mkdirSync(join(project, 'tools'), { recursive: true })
  // `npm test` has built dist/ (pretest). Without --ignore-scripts `npm pack` would run `prepare`,
  // deleting and rebuilding dist/ while the other test files run the command from it.
  const [result] = JSON.parse(sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], root)) as Array<typeof packed>
  packed = result!
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-tools', private: true, type: 'module' }))
  sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed.filename), `zod@${ZOD_FLOOR}`, '@types/node@20', ...README_EXAMPLE_PACKAGES], project)
}, SLOW.INSTALL_MS)

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

const GREET_TS = `import { z } from 'zod'
import { defineTool, ToolError, type GatewayApp, type ToolContext } from 'toolgate'

export default defineTool({
  id: 'greet',
  kind: 'read',
  description: 'Greet someone by name.',
  inputSchema: z.object({ name: z.string().min(1) }),
  outputSchema: z.object({ greeting: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: true,
  authorize (_input, ctx: ToolContext<GatewayApp>) {
    if (ctx.app.principal.id === 'blocked') throw new Error('not you')
  },
  execute ({ name }) {
    if (name === 'nobody') throw new ToolError(404, 'NO_SUCH_PERSON', 'nobody is here')
    const greeting: string = \`Hello, \${name}!\`
    return { greeting }
  },
})
`

const SHOUT_JS = `import { z } from 'zod'

export default {
  id: 'shout',
  kind: 'compute',
  description: 'Upper-case a text.',
  inputSchema: z.object({ text: z.string() }),
  outputSchema: z.object({ text: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: true,
  authorize () {},
  execute: ({ text }) => ({ text: text.toUpperCase() }),
}
`

/** Start `npx toolgate serve DIR` in `cwd`; resolves with its address once it listens. */
async function serve (cwd: string, dir: string, env: Record<string, string> = {}): Promise<{ address: string, stop: () => Promise<void> }> {
  // Without Redis even where the environment names one: nothing here is shared with other runs.
  const child = spawn('npx', ['--no-install', 'toolgate', 'serve', dir], { cwd, env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '', ...env }, detached: true })
  let out = ''
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`no address within 30 s:\n${out}`)) }, 30_000)
    const read = (chunk: Buffer): void => {
      out += String(chunk)
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out)
      if (match !== null) { clearTimeout(timer); resolve(match[1]!) }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.on('exit', code => { clearTimeout(timer); reject(new Error(`exited ${code}:\n${out}`)) })
  })
  const stop = async (): Promise<void> => {
    const exited = new Promise(resolve => child.once('exit', resolve))
    process.kill(-child.pid!, 'SIGTERM')
    await exited
  }
  return { address, stop }
}

async function call (address: string, tool: string, input: unknown): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await fetch(`${address}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

describe('the npm package', () => {
  it('holds compiled JavaScript with declarations, README, docs/ and LICENSE, and nothing from test/, bench/ or scripts/', () => {
    const paths = packed.files.map(file => file.path)
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/plugins/index.js', 'dist/plugins/index.d.ts', 'dist/bin/toolgate.js']))
    // The README links into docs/: every page ships beside it.
    expect(paths).toEqual(expect.arrayContaining(documentPaths()))
    expect(paths.filter(path => /^(test|bench|scripts|tools|runtime|src|plugins|bin|openapi|deploy)\//.test(path) || /^dist\/tools\//.test(path))).toEqual([])
    expect(paths.filter(path => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([])
  })

  it('type-checks a tool written against the shipped types with tsc --strict', () => {
    writeFileSync(join(project, 'tools/greet.ts'), GREET_TS)
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], skipLibCheck: false },
      include: ['tools/*.ts'],
    }))
    expect(() => sh(process.execPath, [tsc, '-p', '.'], project)).not.toThrow()
  }, SLOW.COMPILE_MS)

  it('serves a .ts and a .js tool with `npx toolgate serve`', async () => {
    writeFileSync(join(project, 'tools/greet.ts'), GREET_TS)
    writeFileSync(join(project, 'tools/shout.js'), SHOUT_JS)
    const { address, stop } = await serve(project, 'tools')
    try {
      expect(await call(address, 'greet', { name: 'Ada' })).toEqual({ status: 200, body: { greeting: 'Hello, Ada!' } })
      expect(await call(address, 'shout', { text: 'hi' })).toEqual({ status: 200, body: { text: 'HI' } })
      // The tool's ToolError crosses from the user's file to the gateway as one class: one core.
      expect(await call(address, 'greet', { name: 'nobody' })).toMatchObject({ status: 404, body: { code: 'NO_SUCH_PERSON' } })
      expect(await call(address, 'greet', { name: '' })).toMatchObject({ status: 400, body: { code: 'TOOLGATE_INVALID_INPUT', errors: [{ pointer: '/name' }] } })
    } finally {
      await stop()
    }
  }, SLOW.PROCESS_MS)

  it('serves a tools folder with no node_modules anywhere above it, resolving toolgate and zod to its own', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'toolgate-elsewhere-'))
    try {
      writeFileSync(join(elsewhere, 'greet.ts'), GREET_TS)
      writeFileSync(join(elsewhere, 'shout.js'), SHOUT_JS)
      const { address, stop } = await serve(project, elsewhere)
      try {
        expect(await call(address, 'greet', { name: 'Bo' })).toEqual({ status: 200, body: { greeting: 'Hello, Bo!' } })
        expect(await call(address, 'shout', { text: 'a' })).toEqual({ status: 200, body: { text: 'A' } })
      } finally {
        await stop()
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }
  }, SLOW.PROCESS_MS)

  it('mounts the tools in a bare Fastify app through the plugin, under a prefix', () => {
    writeFileSync(join(project, 'mount.mjs'), `
      import Fastify from 'fastify'
      import { toolgate } from 'toolgate/server'
      import shout from './tools/shout.js'
      const app = Fastify()
      app.get('/', async () => ({ mine: true }))
      await app.register(toolgate, { prefix: '/agent-tools', tools: [shout], config: { authDisabled: true } })
      const results = {}
      for (const [name, options] of Object.entries({
        own: { method: 'GET', url: '/' },
        call: { method: 'POST', url: '/agent-tools/tools/shout', payload: { text: 'ok' } },
        bad: { method: 'POST', url: '/agent-tools/tools/shout', payload: { text: 1 } },
        list: { method: 'GET', url: '/agent-tools/tools' },
        openapi: { method: 'GET', url: '/agent-tools/openapi.json' },
        metrics: { method: 'GET', url: '/agent-tools/metrics' },
      })) {
        const response = await app.inject(options)
        results[name] = { status: response.statusCode, type: response.headers['content-type'], body: response.body }
      }
      let refused
      try { await Fastify().register(toolgate, { tools: [shout] }).ready() } catch (error) { refused = error.message }
      console.log(JSON.stringify({ results, refused }))
      await app.close()
    `)
    const { results, refused } = JSON.parse(sh(process.execPath, ['mount.mjs'], project)) as { results: Record<string, { status: number, type: string, body: string }>, refused: string }
    expect(results.own).toMatchObject({ status: 200, body: '{"mine":true}' })
    expect(results.call).toMatchObject({ status: 200, body: '{"text":"OK"}' })
    expect(results.bad).toMatchObject({ status: 400, type: expect.stringMatching(/^application\/problem\+json/) })
    expect(JSON.parse(results.bad!.body)).toMatchObject({ code: 'TOOLGATE_INVALID_INPUT', errors: [{ pointer: '/text' }] })
    expect(JSON.parse(results.list!.body).tools.map((tool: { id: string }) => tool.id)).toEqual(['shout'])
    expect(Object.keys(JSON.parse(results.openapi!.body).paths)).toContain('/agent-tools/tools/shout')
    expect(results.metrics!.body).toContain('toolgate_tool_calls_total{tool="shout",kind="compute",effects="none",outcome="ok"} 1')
    expect(refused).toMatch(/needs apiKeys or jwt, or authDisabled: true/)
  }, SLOW.PROCESS_MS)

  /** The README and every page of docs/, each as its text. */
  const pages = (): Array<{ path: string, text: string }> => documentPaths().map(path => ({ path, text: readFileSync(join(root, path), 'utf8') }))

  it('resolves every export the README and docs/ name, from the installed package', () => {
    const named = new Map<string, Set<string>>()
    for (const match of pages().flatMap(page => [...page.text.matchAll(/import \{([^}]+)\} from '(toolgate(?:\/server)?)'/g)])) {
      const names = named.get(match[2]!) ?? new Set<string>()
      for (const part of match[1]!.split(',')) {
        const name = part.trim()
        if (name !== '' && !name.startsWith('type ')) names.add(name)
      }
      named.set(match[2]!, names)
    }
    expect([...named.keys()].sort()).toEqual(['toolgate', 'toolgate/server'])
    const script = [...named].map(([specifier, names]) =>
      `{ const m = await import('${specifier}'); for (const n of ${JSON.stringify([...names])}) if (m[n] === undefined) missing.push('${specifier}:' + n) }`).join('\n')
    writeFileSync(join(project, 'exports.mjs'), `const missing = []\n${script}\nconsole.log(JSON.stringify(missing))`)
    expect(JSON.parse(sh(process.execPath, ['exports.mjs'], project))).toEqual([])
  }, SLOW.PROCESS_MS)

  it('compiles every TypeScript example in the README and docs/ against the installed package', () => {
    const blocksOf = (text: string): string[] => [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map(match => match[1]!)
    const all = pages()
    expect(blocksOf(all.find(page => page.path === 'README.md')!.text).length).toBeGreaterThanOrEqual(1)
    const blocks = all.flatMap(page => blocksOf(page.text))
    expect(blocks.length).toBeGreaterThanOrEqual(8)
    const dir = join(project, 'readme')
    mkdirSync(dir, { recursive: true })
    blocks.forEach((code, index) => { writeFileSync(join(dir, `example-${index}.ts`), `${code}\nexport {}\n`) })
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'] },
      include: ['*.ts'],
    }))
    let output = ''
    try { sh(process.execPath, [tsc, '-p', '.'], dir) } catch (error) { output = String((error as { stdout?: string }).stdout) }
    expect(output).toBe('')
  }, SLOW.COMPILE_MS)
})
