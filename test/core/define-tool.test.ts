import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { z as z3 } from 'zod/v3'
import { defineTool } from '../../src/core/define-tool.js'
import { ToolDefinitionError } from '../../src/core/errors.js'
import type { ToolDeclaration } from '../../src/core/tool.js'
import { echoDeclaration, type LooseDeclaration } from './helpers.js'

function define (declaration: LooseDeclaration, source?: string) {
  return defineTool(declaration as unknown as ToolDeclaration, source === undefined ? {} : { source })
}

/** The definition error `declaration` raises; fails the test when it defines cleanly. */
function definitionErrorOf (declaration: LooseDeclaration, source?: string): ToolDefinitionError {
  try {
    define(declaration, source)
  } catch (error) {
    expect(error).toBeInstanceOf(ToolDefinitionError)
    return error as ToolDefinitionError
  }
  return expect.fail('defineTool accepted the declaration')
}

const withoutField = (field: string): LooseDeclaration => {
  const { [field]: _dropped, ...rest } = echoDeclaration()
  return rest
}

// [what is wrong, the declaration, the field the message must name]
const rejected: Array<[string, LooseDeclaration, string]> = [
  ['an id with capitals', echoDeclaration({ id: 'Echo' }), 'id'],
  ['an id starting with a digit', echoDeclaration({ id: '1echo' }), 'id'],
  ['an id with a dash', echoDeclaration({ id: 'echo-tool' }), 'id'],
  ['an id of 65 characters', echoDeclaration({ id: 'e'.repeat(65) }), 'id'],
  ['an unknown field', echoDeclaration({ descripton: 'typo' }), 'descripton'],
  ['a missing kind', withoutField('kind'), 'kind'],
  ['a kind that is not a lowercase word', echoDeclaration({ kind: 'Read Tool' }), 'kind'],
  ['an empty description', echoDeclaration({ description: '' }), 'description'],
  ['a blank description', echoDeclaration({ description: '   ' }), 'description'],
  ['a missing description', withoutField('description'), 'description'],
  ['an empty shortDescription', echoDeclaration({ shortDescription: '' }), 'shortDescription'],
  ['a numeric shortDescription', echoDeclaration({ shortDescription: 5 }), 'shortDescription'],
  ['a JSON Schema as inputSchema', echoDeclaration({ inputSchema: { type: 'object' } }), 'inputSchema'],
  ['a zod v3 schema as inputSchema', echoDeclaration({ inputSchema: z3.object({}) }), 'inputSchema'],
  ['a missing outputSchema', withoutField('outputSchema'), 'outputSchema'],
  ['a string isReadOnly', echoDeclaration({ isReadOnly: 'true' }), 'isReadOnly'],
  ['a missing isConcurrencySafe', withoutField('isConcurrencySafe'), 'isConcurrencySafe'],
  ['a numeric interactive', echoDeclaration({ interactive: 1 }), 'interactive'],
  ['a string supportsEscalation', echoDeclaration({ supportsEscalation: 'yes' }), 'supportsEscalation'],
  ['a null requiresIdempotencyKey', echoDeclaration({ requiresIdempotencyKey: null }), 'requiresIdempotencyKey'],
  ['a missing authorize', withoutField('authorize'), 'authorize'],
  ['a missing execute', withoutField('execute'), 'execute'],
  ['a string execute', echoDeclaration({ execute: 'run' }), 'execute'],
  ['a non-function parseOutput', echoDeclaration({ parseOutput: 1 }), 'parseOutput'],
  ['a non-function active', echoDeclaration({ active: true }), 'active'],
  ['a non-function resolve', echoDeclaration({ resolve: 'x' }), 'resolve'],
  ['a non-function debugSteps', echoDeclaration({ debugSteps: {} }), 'debugSteps'],
  ['a non-function touchedResourcesOf', echoDeclaration({ touchedResourcesOf: [] }), 'touchedResourcesOf'],
  ['a non-function mutatedResourcesOf', echoDeclaration({ mutatedResourcesOf: 'a' }), 'mutatedResourcesOf'],
  ['an unknown effect', echoDeclaration({ effects: ['external', 'explosive'] }), 'effects'],
  ['effects that are not an array', echoDeclaration({ effects: 'external' }), 'effects'],
  ['timeoutMs 0', echoDeclaration({ timeoutMs: 0 }), 'timeoutMs'],
  ['a negative timeoutMs', echoDeclaration({ timeoutMs: -5 }), 'timeoutMs'],
  ['timeoutMs NaN', echoDeclaration({ timeoutMs: NaN }), 'timeoutMs'],
  ['a string timeoutMs', echoDeclaration({ timeoutMs: '100' }), 'timeoutMs'],
  ['timeoutMs beyond the timer limit', echoDeclaration({ timeoutMs: 2 ** 31 }), 'timeoutMs'],
  ['timeoutMs Infinity without interactive', echoDeclaration({ timeoutMs: Infinity }), 'timeoutMs'],
  ['timeoutMs Infinity with interactive false', echoDeclaration({ timeoutMs: Infinity, interactive: false }), 'timeoutMs'],
  ['selfConcurrency 0', echoDeclaration({ selfConcurrency: 0 }), 'selfConcurrency'],
  ['selfConcurrency 1.5', echoDeclaration({ selfConcurrency: 1.5 }), 'selfConcurrency'],
  ["selfConcurrency 'x'", echoDeclaration({ selfConcurrency: 'x' }), 'selfConcurrency'],
]

describe('defineTool rejects a bad declaration, naming the tool and the field', () => {
  it.each(rejected)('%s', (_what, declaration, field) => {
    const error = definitionErrorOf(declaration)
    expect(error.field).toBe(field)
    expect(error.message).toContain(`tool "${String(declaration.id)}"`)
    expect(error.message).toContain(`field "${field}"`)
  })

  it('names the source file when the loader gives one', () => {
    const error = definitionErrorOf(echoDeclaration({ kind: 42 }), 'tools/echo.ts')
    expect(error.message).toContain('tools/echo.ts')
    expect(error.message).toContain('field "kind"')
  })

  it('names the tool as "?" when there is no usable id', () => {
    const error = definitionErrorOf(withoutField('id'))
    expect(error.message).toContain('tool "?"')
    expect(error.message).toContain('field "id"')
  })

  it('rejects something that is not an object at all', () => {
    expect(() => define(null as unknown as LooseDeclaration)).toThrow(ToolDefinitionError)
  })
})

describe('defineTool accepts what the contract allows', () => {
  it('allows timeoutMs Infinity for an interactive tool', () => {
    expect(define(echoDeclaration({ timeoutMs: Infinity, interactive: true })).timeoutMs).toBe(Infinity)
  })

  it('allows selfConcurrency as a getter', () => {
    const declaration = echoDeclaration()
    Object.defineProperty(declaration, 'selfConcurrency', { get: () => 3, enumerable: true })
    expect(define(declaration).selfConcurrency).toBe(3)
  })

  it('allows selfConcurrency as a function, read live', () => {
    let limit = 2
    const tool = define(echoDeclaration({ selfConcurrency: () => limit }))
    limit = 4
    expect((tool.selfConcurrency as () => number)()).toBe(4)
  })

  it('allows a whole-number selfConcurrency and the largest timer value', () => {
    const tool = define(echoDeclaration({ selfConcurrency: 1, timeoutMs: 2 ** 31 - 1 }))
    expect([tool.selfConcurrency, tool.timeoutMs]).toEqual([1, 2 ** 31 - 1])
  })

  it('allows every optional field at once', () => {
    const tool = define(echoDeclaration({
      shortDescription: 'echo(text)', effects: ['external'], timeoutMs: 10, interactive: false,
      supportsEscalation: true, requiresIdempotencyKey: false, parseOutput: (v: unknown) => v,
      active: () => true, resolve: () => 'plan', debugSteps () {}, touchedResourcesOf: () => [],
      mutatedResourcesOf: () => [], selfConcurrency: 2, outputSchema: z.object({ text: z.string() }),
    }))
    expect(tool.id).toBe('echo')
  })
})
