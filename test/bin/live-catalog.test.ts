import { SLOW } from '../slow.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { freePort } from '../../scripts/lib/free-port.js'

// `toolgate serve` as it ships (the compiled command, `npm test` builds first), on a tools folder
// of its own that each test edits while it serves: what an operator sees when the folder changes.
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'dist/bin/toolgate.js')

/** Generous bounds: a reload is a file event, 150 ms of quiet, an esbuild transform and an import. */
const TEST_MS = SLOW.PROCESS_MS
const WAIT_MS = 20_000

interface LogLine {
  readonly level: number
  readonly msg: string
  readonly [field: string]: unknown
}

interface Gateway {
  readonly child: ChildProcess
  readonly address: string
  /** Every JSON line the gateway wrote to stdout, in order. */
  readonly logs: LogLine[]
  readonly stderr: () => string
}

const children = new Set<ChildProcess>()
const folders: string[] = []

/** A fresh folder outside the repository: the tools import 'toolgate' and 'zod' through the gateway's module hooks. */
function tempFolder (prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  folders.push(dir)
  return dir
}

/** Poll `condition` until it gives a value other than undefined or false, at most `timeoutMs`. */
async function until<T> (condition: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = condition()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(25)
  }
}

/** Start `toolgate serve` on `dir` with default settings (anonymous callers on loopback). */
async function startGateway (dir: string, options: { watch: boolean }): Promise<Gateway> {
  // The port is free when chosen, not necessarily when the child binds it: try again if taken.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const args = [bin, 'serve', ...(options.watch ? ['--watch'] : []), dir]
    // Only what the command needs: no setting from the environment running the tests.
    const child = spawn(process.execPath, args, { cwd: dir, env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    child.once('exit', () => { children.delete(child) })
    const logs: LogLine[] = []
    let stderr = ''
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    createInterface({ input: child.stdout! }).on('line', line => {
      try {
        logs.push(JSON.parse(line) as LogLine)
      } catch {
        logs.push({ level: 0, msg: line })
      }
    })
    const exited = (): boolean => child.exitCode !== null || child.signalCode !== null
    await until(() => exited() || logs.some(line => line.msg === 'toolgate listening'), WAIT_MS, 'the gateway to listen')
    const listening = logs.find(line => line.msg === 'toolgate listening')
    if (listening !== undefined) return { child, address: String(listening.address), logs, stderr: () => stderr }
    await stopGateway(child)
    if (!(`${stderr}${JSON.stringify(logs)}`.includes('EADDRINUSE')) || attempt === 3) {
      throw new Error(`toolgate serve exited (${child.exitCode ?? child.signalCode}) before listening:\n${stderr}\n${logs.map(line => JSON.stringify(line)).join('\n')}`)
    }
  }
}

/** SIGTERM (the graceful stop), then SIGKILL if it is still there after a few seconds. */
async function stopGateway (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exit = once(child, 'exit')
  child.kill('SIGTERM')
  const stopped = await Promise.race([exit.then(() => true), sleep(5_000).then(() => false)])
  if (!stopped) {
    child.kill('SIGKILL')
    await exit
  }
}

/** The first log line after index `from` that `match` accepts, once the gateway wrote it. */
async function logLine (gateway: Gateway, from: number, match: (line: LogLine) => boolean, what: string): Promise<LogLine> {
  try {
    return await until(() => {
      if (gateway.child.exitCode !== null || gateway.child.signalCode !== null) throw new Error('the gateway exited')
      return gateway.logs.slice(from).find(match)
    }, WAIT_MS, what)
  } catch (error) {
    const tail = gateway.logs.slice(from).map(line => JSON.stringify(line)).join('\n')
    throw new Error(`${(error as Error).message}; logged since:\n${tail}\n${gateway.stderr()}`, { cause: error })
  }
}

const listed = (field: string, id: string) => (line: LogLine): boolean => Array.isArray(line[field]) && (line[field] as unknown[]).includes(id)
const replaced = (field: 'added' | 'changed' | 'removed', id: string) => (line: LogLine): boolean => line.msg === 'tools replaced' && listed(field, id)(line)
const refused = (line: LogLine): boolean => line.level === 50 && line.msg.startsWith('the tools were not replaced (still serving version ')

/** Wait until a reload after `from` has done what `match` says. */
async function reloaded (gateway: Gateway, from: number, match: (line: LogLine) => boolean, what: string): Promise<LogLine> {
  return await logLine(gateway, from, line => match(line) || refused(line), what).then(line => {
    if (!match(line)) throw new Error(`the reload was refused: ${JSON.stringify(line)}`)
    return line
  })
}

async function call (gateway: Gateway, id: string, input: unknown): Promise<{ status: number, type: string, body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.address}/tools/${id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) })
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.json() as Record<string, unknown> }
}

async function getJson<T> (gateway: Gateway, path: string): Promise<T> {
  const response = await fetch(`${gateway.address}${path}`)
  expect(response.status).toBe(200)
  return await response.json() as T
}

const listedIds = async (gateway: Gateway): Promise<string[]> => (await getJson<{ tools: Array<{ id: string }> }>(gateway, '/tools')).tools.map(tool => tool.id)
const openaiNames = async (gateway: Gateway): Promise<string[]> => (await getJson<{ tools: Array<{ function: { name: string } }> }>(gateway, '/tools?format=openai')).tools.map(tool => tool.function.name)
const documentPaths = async (gateway: Gateway): Promise<string[]> => Object.keys((await getJson<{ paths: Record<string, unknown> }>(gateway, '/openapi.json')).paths)

/** One sample of the Prometheus exposition, e.g. `metric(g, 'toolgate_catalog_replacements_total{outcome="failed"}')`. */
async function metric (gateway: Gateway, sample: string): Promise<number> {
  const text = await (await fetch(`${gateway.address}/metrics`)).text()
  const line = text.split('\n').find(row => row.startsWith(`${sample} `))
  if (line === undefined) throw new Error(`no sample ${sample} in /metrics`)
  return Number(line.slice(sample.length + 1))
}
const FAILED = 'toolgate_catalog_replacements_total{outcome="failed"}'
const OK = 'toolgate_catalog_replacements_total{outcome="ok"}'

interface ToolSource {
  readonly id: string
  readonly description?: string
  readonly input?: string
  readonly output?: string
  readonly execute?: string
  /** Lines before the declaration (imports, constants). */
  readonly head?: string
  /** Export the plain declaration object, which the loader defines, instead of calling `defineTool`. */
  readonly plain?: boolean
}

/** A TypeScript tool module: `defineTool` from 'toolgate' (or a plain declaration), schemas from 'zod'. */
function toolModule ({ id, description = `The ${id} tool.`, input = 'z.object({ text: z.string() })', output = 'z.object({ echoed: z.string() })', execute = '({ text }) => ({ echoed: text })', head = '', plain = false }: ToolSource): string {
  return `${plain ? '' : 'import { defineTool } from \'toolgate\'\n'}import { z } from 'zod'
${head}
export default ${plain ? '' : 'defineTool'}({
  id: ${JSON.stringify(id)}, kind: 'read', description: ${JSON.stringify(description)},
  isReadOnly: true, isConcurrencySafe: true, authorize () {},
  inputSchema: ${input},
  outputSchema: ${output},
  execute: ${execute},
})
`
}

// A worker that ends abruptly still takes its gateways with it.
process.once('exit', () => { for (const child of children) child.kill('SIGKILL') })

afterAll(async () => {
  // Whatever a failed test or hook left running.
  await Promise.all([...children].map(stopGateway))
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

describe('toolgate serve --watch: adding, changing and removing tool files', () => {
  let dir: string
  let gateway: Gateway
  let client: Client

  beforeAll(async () => {
    dir = tempFolder('toolgate-live-')
    writeFileSync(join(dir, 'steady.ts'), toolModule({ id: 'steady' }))
    gateway = await startGateway(dir, { watch: true })
    client = new Client({ name: 'toolgate-live-catalog-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.address}/mcp`)))
  }, TEST_MS)

  afterAll(async () => {
    await client?.close()
    if (gateway !== undefined) await stopGateway(gateway.child)
  }, TEST_MS)

  it('a new tool file answers at once on REST, in every listing and document, and to an MCP client connected before it', async () => {
    expect((await client.listTools()).tools.map(tool => tool.name)).not.toContain('greet')
    const from = gateway.logs.length
    writeFileSync(join(dir, 'greet.ts'), toolModule({ id: 'greet', input: 'z.object({ name: z.string() })', output: 'z.object({ greeting: z.string() })', execute: '({ name }) => ({ greeting: `hello ${name}` })' }))
    await reloaded(gateway, from, replaced('added', 'greet'), 'greet to be added')

    expect(await call(gateway, 'greet', { name: 'Ada' })).toMatchObject({ status: 200, body: { greeting: 'hello Ada' } })
    expect(await listedIds(gateway)).toEqual(expect.arrayContaining(['steady', 'greet']))
    expect(await openaiNames(gateway)).toContain('greet')
    expect(await documentPaths(gateway)).toContain('/tools/greet')
    // The same session lists it: no reconnect.
    expect((await client.listTools()).tools.map(tool => tool.name)).toContain('greet')
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Lin' } })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({ greeting: 'hello Lin' })
  }, TEST_MS)

  it('a file changed to a stricter input schema refuses with 400 the input it took before, and the reload names it changed', async () => {
    let from = gateway.logs.length
    writeFileSync(join(dir, 'label.ts'), toolModule({ id: 'label' }))
    await reloaded(gateway, from, replaced('added', 'label'), 'label to be added')
    expect(await call(gateway, 'label', { text: 'abcdef' })).toMatchObject({ status: 200, body: { echoed: 'abcdef' } })

    from = gateway.logs.length
    writeFileSync(join(dir, 'label.ts'), toolModule({ id: 'label', input: 'z.object({ text: z.string().max(3) })' }))
    const line = await reloaded(gateway, from, replaced('changed', 'label'), 'label to be changed')
    expect(line).toMatchObject({ added: [], changed: ['label'], removed: [] })

    expect(await call(gateway, 'label', { text: 'abcdef' })).toMatchObject({ status: 400 })
    expect(await call(gateway, 'label', { text: 'abc' })).toMatchObject({ status: 200, body: { echoed: 'abc' } })
  }, TEST_MS)

  it('a removed file\'s tool is a 404 problem on REST, gone from MCP listTools and the document, and the tools gauge drops', async () => {
    let from = gateway.logs.length
    writeFileSync(join(dir, 'doomed.ts'), toolModule({ id: 'doomed' }))
    await reloaded(gateway, from, replaced('added', 'doomed'), 'doomed to be added')
    expect((await client.listTools()).tools.map(tool => tool.name)).toContain('doomed')
    const before = await metric(gateway, 'toolgate_catalog_tools')

    from = gateway.logs.length
    unlinkSync(join(dir, 'doomed.ts'))
    await reloaded(gateway, from, replaced('removed', 'doomed'), 'doomed to be removed')

    const refusal = await call(gateway, 'doomed', { text: 'x' })
    expect(refusal).toMatchObject({ status: 404, body: { code: 'TOOLGATE_NOT_FOUND' } })
    expect(refusal.type).toMatch(/^application\/problem\+json/)
    expect((await client.listTools()).tools.map(tool => tool.name)).not.toContain('doomed')
    expect(await documentPaths(gateway)).not.toContain('/tools/doomed')
    expect(await listedIds(gateway)).not.toContain('doomed')
    expect(await metric(gateway, 'toolgate_catalog_tools')).toBe(before - 1)
  }, TEST_MS)

  it('a file rewritten with identical content reloads with nothing changed', async () => {
    const from = gateway.logs.length
    writeFileSync(join(dir, 'steady.ts'), toolModule({ id: 'steady' }))
    const line = await logLine(gateway, from, entry => entry.msg === 'tools reloaded: nothing changed' || refused(entry) || entry.msg === 'tools replaced', 'the identical rewrite to reload')
    expect(line).toMatchObject({ msg: 'tools reloaded: nothing changed', added: [], changed: [], removed: [] })
    expect(await call(gateway, 'steady', { text: 'still' })).toMatchObject({ status: 200, body: { echoed: 'still' } })
  }, TEST_MS)
})

describe('toolgate serve --watch: a broken tool file', () => {
  let dir: string
  let gateway: Gateway
  const file = (): string => join(dir, 'sturdy.ts')

  beforeAll(async () => {
    dir = tempFolder('toolgate-live-broken-')
    writeFileSync(file(), toolModule({ id: 'sturdy' }))
    gateway = await startGateway(dir, { watch: true })
  }, TEST_MS)

  // Each test starts from a folder that loads, whatever the test before it left.
  beforeEach(async () => {
    const from = gateway.logs.length
    rmSync(join(dir, 'twin.ts'), { force: true })
    writeFileSync(file(), toolModule({ id: 'sturdy' }))
    await logLine(gateway, from, line => line.msg === 'tools replaced' || line.msg === 'tools reloaded: nothing changed', 'the folder to load again')
  }, TEST_MS)

  afterAll(async () => {
    if (gateway !== undefined) await stopGateway(gateway.child)
  }, TEST_MS)

  it('a syntax error keeps the serving tools, names the file and counts a failed reload; the fixed file then loads', async () => {
    const [failed, ok] = [await metric(gateway, FAILED), await metric(gateway, OK)]
    let from = gateway.logs.length
    writeFileSync(file(), toolModule({ id: 'sturdy' }).replace(/\}\)\n$/, '}\n'))
    const line = await logLine(gateway, from, refused, 'the broken file to be refused')
    expect(line).toMatchObject({ level: 50, file: file() })
    expect(line.msg).toContain('sturdy.ts')

    expect(await call(gateway, 'sturdy', { text: 'on' })).toMatchObject({ status: 200, body: { echoed: 'on' } })
    expect(await metric(gateway, FAILED)).toBe(failed + 1)

    from = gateway.logs.length
    writeFileSync(file(), toolModule({ id: 'sturdy', description: 'Fixed after a syntax error.' }))
    await reloaded(gateway, from, replaced('changed', 'sturdy'), 'the fixed file to load')
    expect(await metric(gateway, OK)).toBe(ok + 1)
    const tools = await getJson<{ tools: Array<{ id: string, description: string }> }>(gateway, '/tools')
    expect(tools.tools.find(tool => tool.id === 'sturdy')?.description).toBe('Fixed after a syntax error.')
  }, TEST_MS)

  it('a declaration without a description keeps the serving tools and names the file, the tool and the field', async () => {
    const failed = await metric(gateway, FAILED)
    let from = gateway.logs.length
    writeFileSync(file(), toolModule({ id: 'sturdy' }).replace(/ description: "[^"]*",/, ''))
    const line = await logLine(gateway, from, refused, 'the declaration to be refused')
    expect(line).toMatchObject({ level: 50, file: file(), tool: 'sturdy', field: 'description' })

    expect(await call(gateway, 'sturdy', { text: 'on' })).toMatchObject({ status: 200 })
    expect(await metric(gateway, FAILED)).toBe(failed + 1)

    from = gateway.logs.length
    writeFileSync(file(), toolModule({ id: 'sturdy', description: 'Fixed after a missing description.' }))
    await reloaded(gateway, from, replaced('changed', 'sturdy'), 'the fixed file to load')
    expect(await call(gateway, 'sturdy', { text: 'on' })).toMatchObject({ status: 200 })
  }, TEST_MS)

  it('an id declared in a second file keeps the serving tools and names that file and the id field; removing it reloads', async () => {
    const [failed, ok] = [await metric(gateway, FAILED), await metric(gateway, OK)]
    let from = gateway.logs.length
    const twin = join(dir, 'twin.ts')
    writeFileSync(twin, toolModule({ id: 'sturdy', description: 'The same id again.', plain: true }))
    const line = await logLine(gateway, from, refused, 'the duplicate id to be refused')
    expect(line).toMatchObject({ level: 50, file: twin, tool: 'sturdy', field: 'id' })
    expect(line.msg).toContain(`first in ${file()}`)

    expect(await call(gateway, 'sturdy', { text: 'on' })).toMatchObject({ status: 200 })
    expect(await metric(gateway, FAILED)).toBe(failed + 1)

    from = gateway.logs.length
    unlinkSync(twin)
    // The folder is again what is serving: a successful reload that changes nothing.
    const fixed = await logLine(gateway, from, entry => entry.msg === 'tools reloaded: nothing changed' || entry.msg === 'tools replaced' || refused(entry), 'the folder to reload')
    expect(fixed).toMatchObject({ msg: 'tools reloaded: nothing changed' })
    expect(await metric(gateway, OK)).toBe(ok + 1)
  }, TEST_MS)
})

describe('toolgate serve --watch: a call running across a reload', () => {
  let dir: string
  let gate: string
  let gateway: Gateway

  /** v1 waits until the test opens its gate; v2 answers at once, with another output schema. */
  const slow = (version: 1 | 2): string => toolModule({
    id: 'slow',
    head: `import { existsSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'`,
    input: 'z.object({})',
    output: version === 1 ? 'z.object({ version: z.literal(1) })' : 'z.object({ version: z.literal(2), build: z.string() })',
    execute: version === 1
      ? `async () => {
    writeFileSync(${JSON.stringify(join(gate, 'started'))}, '')
    while (!existsSync(${JSON.stringify(join(gate, 'release'))})) await sleep(20)
    return { version: 1 }
  }`
      : '() => ({ version: 2, build: \'second\' })',
  })

  beforeAll(async () => {
    dir = tempFolder('toolgate-live-inflight-')
    // Outside the tools folder: the gate's files are no change to it.
    gate = tempFolder('toolgate-live-gate-')
    writeFileSync(join(dir, 'slow.ts'), slow(1))
    gateway = await startGateway(dir, { watch: true })
  }, TEST_MS)

  afterAll(async () => {
    if (gate !== undefined) writeFileSync(join(gate, 'release'), '')
    if (gateway !== undefined) await stopGateway(gateway.child)
  }, TEST_MS)

  it('finishes on the declaration it started with, while a new call gets the new one', async () => {
    const inFlight = call(gateway, 'slow', {})
    inFlight.catch(() => undefined) // awaited below; a failure before then is the test's, not an unhandled rejection
    await until(() => existsSync(join(gate, 'started')), WAIT_MS, 'the first call to be executing')

    const from = gateway.logs.length
    writeFileSync(join(dir, 'slow.ts'), slow(2))
    await reloaded(gateway, from, replaced('changed', 'slow'), 'slow to be changed')

    expect(await call(gateway, 'slow', {})).toMatchObject({ status: 200, body: { version: 2, build: 'second' } })
    writeFileSync(join(gate, 'release'), '')
    // Its output is checked against the old output schema (the new one requires `build`).
    expect(await inFlight).toMatchObject({ status: 200, body: { version: 1 } })
  }, TEST_MS)
})

describe('toolgate serve without --watch: SIGHUP', () => {
  let dir: string
  let gateway: Gateway

  beforeAll(async () => {
    dir = tempFolder('toolgate-live-hup-')
    writeFileSync(join(dir, 'hup.ts'), toolModule({ id: 'hup', execute: '() => ({ echoed: \'before\' })' }))
    gateway = await startGateway(dir, { watch: false })
  }, TEST_MS)

  afterAll(async () => {
    if (gateway !== undefined) await stopGateway(gateway.child)
  }, TEST_MS)

  it('a changed file is not served until SIGHUP, then it is', async () => {
    expect(gateway.logs.map(line => line.msg)).not.toContain('watching the tools folder: a change reloads it')
    const from = gateway.logs.length
    writeFileSync(join(dir, 'hup.ts'), toolModule({ id: 'hup', execute: '() => ({ echoed: \'after\' })' }))
    // Proving that nothing happens takes a wait: several times the watcher's quiet period.
    await sleep(1_000)
    expect(await call(gateway, 'hup', { text: 'x' })).toMatchObject({ status: 200, body: { echoed: 'before' } })
    expect(gateway.logs.slice(from).filter(line => line.msg.startsWith('tools re') || refused(line))).toEqual([])

    gateway.child.kill('SIGHUP')
    await reloaded(gateway, from, replaced('changed', 'hup'), 'SIGHUP to reload hup')
    expect(await call(gateway, 'hup', { text: 'x' })).toMatchObject({ status: 200, body: { echoed: 'after' } })
  }, TEST_MS)

  it('SIGHUP with nothing changed logs "tools reloaded: nothing changed" with empty arrays', async () => {
    const ok = await metric(gateway, OK)
    const from = gateway.logs.length
    gateway.child.kill('SIGHUP')
    const line = await logLine(gateway, from, entry => entry.msg.startsWith('tools re') || refused(entry), 'SIGHUP to reload')
    expect(line).toMatchObject({ level: 30, msg: 'tools reloaded: nothing changed', added: [], changed: [], removed: [] })
    expect(await metric(gateway, OK)).toBe(ok + 1)
    expect(await call(gateway, 'hup', { text: 'x' })).toMatchObject({ status: 200, body: { echoed: 'after' } })
  }, TEST_MS)
})

describe('toolgate serve --watch: helpers in a sub-folder', () => {
  let dir: string
  let gateway: Gateway

  const store = (step: number): string => `let count = 0
export function next (): number {
  count += ${step}
  return count
}
`
  const other = (description: string): string => toolModule({ id: 'other', description })
  const count = async (): Promise<unknown> => (await call(gateway, 'count', {})).body.count

  beforeAll(async () => {
    dir = tempFolder('toolgate-live-helpers-')
    mkdirSync(join(dir, 'lib'))
    writeFileSync(join(dir, 'lib', 'store.ts'), store(1))
    writeFileSync(join(dir, 'counter.ts'), toolModule({
      id: 'count', head: 'import { next } from \'./lib/store.ts\'', input: 'z.object({})', output: 'z.object({ count: z.number() })', execute: '() => ({ count: next() })',
    }))
    writeFileSync(join(dir, 'other.ts'), other('Another tool.'))
    gateway = await startGateway(dir, { watch: true })
  }, TEST_MS)

  afterAll(async () => {
    if (gateway !== undefined) await stopGateway(gateway.child)
  }, TEST_MS)

  it('a helper keeps its state when an unrelated tool file changes', async () => {
    expect([await count(), await count(), await count()]).toEqual([1, 2, 3])
    const from = gateway.logs.length
    writeFileSync(join(dir, 'other.ts'), other('Another tool, edited.'))
    const line = await reloaded(gateway, from, replaced('changed', 'other'), 'other to be changed')
    expect(line).toMatchObject({ changed: ['other'] })
    expect(await count()).toBe(4)
  }, TEST_MS)

  it('a changed helper is imported afresh: its new code serves, and keeps its own state from then on', async () => {
    let from = gateway.logs.length
    writeFileSync(join(dir, 'lib', 'store.ts'), store(10))
    await reloaded(gateway, from, replaced('changed', 'count'), 'count to be changed by its helper')
    expect([await count(), await count()]).toEqual([10, 20])

    from = gateway.logs.length
    writeFileSync(join(dir, 'other.ts'), other('Another tool, edited again.'))
    await reloaded(gateway, from, replaced('changed', 'other'), 'other to be changed')
    expect(await count()).toBe(30)
  }, TEST_MS)
})
