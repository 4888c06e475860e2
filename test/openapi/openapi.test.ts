import { readFile } from 'node:fs/promises'
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { generateOpenApi } from '../../scripts/openapi.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'

const committedPath = new URL('../../openapi/openapi.json', import.meta.url)

describe('the OpenAPI document', () => {
  it('the committed document equals what the code generates (run `npm run openapi`)', async () => {
    expect(await readFile(committedPath, 'utf8')).toBe(await generateOpenApi())
  })

  it('is a valid OpenAPI 3.1 document', async () => {
    const document = JSON.parse(await readFile(committedPath, 'utf8'))
    await expect(SwaggerParser.validate(document)).resolves.toBeTruthy()
  })

  it('has one operation per shipped tool, derived from its declaration', async () => {
    const document = JSON.parse(await readFile(committedPath, 'utf8'))
    const tools = await loadToolsFromDir(new URL('../../tools', import.meta.url).pathname)
    for (const tool of tools) {
      const operation = document.paths[`/tools/${tool.id}`].post
      expect(operation.operationId).toBe(tool.id)
      expect(operation.tags).toEqual([tool.kind])
      expect(operation['x-effects']).toEqual([...tool.effects])
      expect(operation['x-read-only']).toBe(tool.isReadOnly)
      expect(operation['x-concurrency-safe']).toBe(tool.isConcurrencySafe)
      expect(operation.description).toContain(tool.effects.length === 0 ? 'none declared' : tool.effects.join(', '))
      expect(operation.requestBody.content['application/json'].schema).toBeTruthy()
      expect(operation.responses['200'].content['application/json'].schema).toBeTruthy()
      for (const status of ['400', '401', '403', '404', '429', '500', '502', '503', '504']) {
        expect(operation.responses[status].content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' })
      }
    }
  })

  it('documents each tool\'s declared errors on its operation, and on no other', async () => {
    const document = JSON.parse(await readFile(committedPath, 'utf8'))
    const responses = (id: string): Record<string, { description: string, content: Record<string, { schema: Record<string, unknown> }> }> => document.paths[`/tools/${id}`].post.responses
    const write = responses('notes_write')
    // Only the tool answers 423 and 507: problem+json whose code is exactly the declared one.
    expect(write['423']!.content['application/problem+json']!.schema).toEqual({ allOf: [{ $ref: '#/components/schemas/Problem' }, expect.objectContaining({ properties: { code: expect.objectContaining({ enum: ['NOTE_LOCKED'] }) } })] })
    expect(write['507']!.description).toContain('NOTES_FULL')
    // 409 is the gateway's too: the Problem schema, with the tool's code in the description.
    expect(write['409']!.content['application/problem+json']!.schema).toEqual({ $ref: '#/components/schemas/Problem' })
    expect(write['409']!.description).toContain('NOTE_EXISTS')
    expect(document.paths['/tools/notes_write'].post['x-tool-errors'].map((e: { code: string }) => e.code)).toEqual(['NOTE_EXISTS', 'NOTE_LOCKED', 'NOTES_FULL'])
    // notes_read can only miss a note: no 423, no 507.
    expect(Object.keys(responses('notes_read'))).not.toContain('423')
    expect(Object.keys(responses('notes_read'))).not.toContain('507')
    expect(Object.keys(responses('time_now'))).not.toContain('423')
  })
})
