import { execFile } from 'node:child_process'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import openapiTS, { astToString } from 'openapi-typescript'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { SLOW } from '../slow.js'
import { EVERYTHING, MEMORY, petstore, startPrism, tempDir, upstreamsFile, type Prism } from './helpers.js'

/**
 * Upstream tools through a client generated from the gateway's own document (openapi-typescript
 * types, openapi-fetch calls): compiled with `tsc --strict`, then run against the gateway. The
 * MCP servers' tools and an HTTP service's operations (Prism on the 3.1 petstore) alike.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
let dir: string
let app: FastifyInstance
let url: string
let prism: Prism | undefined

const CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const client = createClient<paths, 'application/json'>({ baseUrl: process.env.GATEWAY_URL })

// server-memory declares an output schema: the 200 body is its structured content, typed.
const created = await client.POST('/tools/memory_create_entities', {
  body: { entities: [{ name: 'typed', entityType: 'client', observations: ['generated'] }] },
})
if (created.data === undefined) throw new Error(\`status \${created.response.status}\`)
const names: string[] = created.data.entities.map(entity => entity.name)

// get-sum declares none: the body is the MCP content blocks.
const sum = await client.POST('/tools/everything_get_sum', { body: { a: 20, b: 22 } })
if (sum.data === undefined) throw new Error(\`status \${sum.response.status}\`)
const blocks: Array<{ type: string }> = sum.data.content

// A 400 is a typed problem.
const bad = await client.POST('/tools/everything_get_sum', { body: { a: 1 } as never })
const problem = bad.error
const pointers = problem !== undefined && 'errors' in problem && Array.isArray(problem.errors) ? problem.errors.map((issue: { pointer: string }) => issue.pointer) : []

// An HTTP operation: the 200 body is the service's own JSON, typed from its document.
const pet = await client.POST('/tools/pets_get_pet_by_id', { body: { petId: 7 } })
if (pet.data === undefined) throw new Error(\`status \${pet.response.status}\`)
const petName: string = pet.data.name
const found = await client.POST('/tools/pets_find_pets_by_status', { body: { status: ['available'] } })
if (found.data === undefined) throw new Error(\`status \${found.response.status}\`)
const urls: string[] = found.data.flatMap(one => one.photoUrls)

process.stdout.write(JSON.stringify({ names, blocks, pointers, petName: typeof petName, urls: urls.length > 0 }))
`

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-upstream-client-'))
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n')
  prism = await startPrism(petstore('3.1'))
  const file = upstreamsFile({
    openapi: { pets: { document: petstore('3.1'), baseUrl: prism.url, headers: { api_key: 'generated-client-key', Authorization: 'Bearer generated-client-key' }, include: ['getPetById', 'findPetsByStatus'] } },
    mcpServers: {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(tempDir(), 'memory.jsonl') } },
    },
  })
  app = await buildApp({ config: loadConfig({}, { upstreamsFile: file }), tools: [] })
  url = await app.listen({ host: '127.0.0.1', port: 0 })
  await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(app.openapiDocument() as never)))
  await writeFile(join(dir, 'client.ts'), CLIENT)
}, SLOW.COMPILE_MS)
afterAll(async () => {
  await app?.close()
  prism?.stop()
  await rm(dir, { recursive: true, force: true })
})

it('a generated client compiles with tsc --strict against upstream tools and calls them', async () => {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const compiled = await run(process.execPath, [tsc, '--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', 'client.ts'], { cwd: dir, timeout: SLOW.COMPILE_MS }).catch((error: { stdout?: string }) => { throw new Error(String(error.stdout)) })
  expect(compiled.stdout).toBe('')
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'client.ts'], { cwd: dir, env: { ...process.env, GATEWAY_URL: url }, timeout: SLOW.PROCESS_MS })
  const result = JSON.parse(stdout) as { names: string[], blocks: Array<{ type: string, text?: string }>, pointers: string[], petName: string, urls: boolean }
  expect(result.petName).toBe('string')
  expect(result.urls).toBe(true)
  expect(result.names).toEqual(['typed'])
  expect(result.blocks[0]).toMatchObject({ type: 'text', text: expect.stringContaining('42') })
  expect(result.pointers).toEqual(['/b'])
}, SLOW.COMPILE_MS)
