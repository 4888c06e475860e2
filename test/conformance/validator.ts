import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'

type Document = { paths: Record<string, Record<string, Operation>> }
export interface Operation {
  operationId?: string
  parameters?: Array<{ name: string, in: string, required?: boolean }>
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>
  'x-tool-errors'?: Array<{ status: number, code: string, description: string }>
}

// ajv-formats is CommonJS with a default export: under ESM the function may sit one level down.
type AddFormats = (ajv: Ajv2020) => unknown
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats)

/**
 * An independent check of answers against the served document: Ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1) compiles each response schema straight from the document by JSON
 * pointer, so `$ref`s into `components` resolve as any OpenAPI tool would resolve them.
 */
export class ResponseValidator {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  readonly #compiled = new Map<string, (data: unknown) => boolean>()

  constructor (readonly document: Document) {
    addFormats(this.#ajv)
    this.#ajv.addSchema(document as object, 'openapi')
  }

  /** Assert that `response` is one the document lists for this operation, and that its body validates. */
  check (path: string, method: string, response: LightMyRequestResponse, label: string): void {
    const operation = this.document.paths[path]![method]!
    const status = String(response.statusCode)
    const documented = operation.responses[status] ?? operation.responses.default
    expect(documented, `${label}: status ${status} is not documented for ${method.toUpperCase()} ${path} (${response.body.slice(0, 200)})`).toBeDefined()
    const mediaType = String(response.headers['content-type'] ?? '').split(';')[0]!.trim()
    const content = documented!.content
    if (content === undefined) return
    expect(Object.keys(content), `${label}: ${status} answered ${mediaType}`).toContain(mediaType)
    const pointer = `#/paths/${escape(path)}/${method}/responses/${operation.responses[status] === undefined ? 'default' : status}/content/${escape(mediaType)}/schema`
    const validate = this.#validator(pointer)
    const body: unknown = response.body === '' ? undefined : JSON.parse(response.body)
    const valid = validate(body)
    expect(valid, `${label}: the ${status} body does not match its schema: ${this.#ajv.errorsText((validate as unknown as { errors: unknown[] }).errors as never)}\n${response.body.slice(0, 300)}`).toBe(true)
  }

  #validator (pointer: string): (data: unknown) => boolean {
    let validate = this.#compiled.get(pointer)
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `openapi${pointer}` })
      this.#compiled.set(pointer, validate)
    }
    return validate
  }
}

function escape (segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1')
}
