import type { z } from 'zod'
import type { GatewayApp } from '../../../core/app-context.js'
import type { Effect, ToolDeclaration, ToolOrigin } from '../../../core/tool.js'
import type { OperatorDeclaration } from '../file.js'
import { passesThrough, serviceErrorCode, type OperationPlan } from './operation.js'
import type { OpenApiService } from './service.js'
import { jsonSchema, operatorFields } from '../operator.js'

/*
 * An HTTP operation as one more declaration, run by the same pipeline as every tool. Safe
 * methods (GET, HEAD) default to read-only and concurrency-safe, every other method to
 * neither; every call reaches outside (`external`), and a method that is not safe may undo
 * nothing (`irreversible`) unless the operator says otherwise. The operator always wins, and
 * the listing says which for every field.
 */

type Declaration = ToolDeclaration<z.ZodType, z.ZodType, GatewayApp>
type Source = ToolOrigin['declaredBy'][string]

const SAFE = new Set(['GET', 'HEAD'])

export interface OperationTool {
  readonly id: string
  readonly plan: OperationPlan
  readonly operator: OperatorDeclaration
  readonly service: OpenApiService
}

export function operationDeclarationOf ({ id, plan, operator, service }: OperationTool): Declaration {
  const declaredBy: Record<string, Source> = {}
  const pick = <T>(field: string, mine: T | undefined, theirs: T | undefined, fallback: T): T => {
    declaredBy[field] = mine !== undefined ? 'operator' : theirs !== undefined ? 'upstream' : 'default'
    return mine ?? theirs ?? fallback
  }
  const safe = SAFE.has(plan.method)
  const isReadOnly = pick('isReadOnly', operator.isReadOnly, undefined, safe)
  const isConcurrencySafe = pick('isConcurrencySafe', operator.isConcurrencySafe, undefined, safe)
  const effects = pick<Effect[]>('effects', operator.effects, undefined, isReadOnly ? ['external'] : ['irreversible', 'external'])
  const documented = [plan.summary, plan.description].filter(text => text !== undefined && text.trim() !== '').join('\n\n')
  const description = pick('description', operator.description, documented === '' ? undefined : documented, `The operation ${plan.name} (${plan.method} ${plan.path}) of the HTTP service "${service.config.name}".`)
  return {
    id,
    kind: operator.kind ?? 'http',
    description,
    inputSchema: jsonSchema(plan.inputSchema),
    outputSchema: jsonSchema(plan.outputSchema),
    effects,
    isReadOnly,
    isConcurrencySafe,
    // The service's own 4xx that pass through, as its document lists them: each documented on the operation, with its own code.
    errors: plan.clientErrors.filter(({ status }) => passesThrough(status)).map(({ status, description }) => ({
      status,
      code: serviceErrorCode(status),
      description: `The service answered ${status}${description === '' ? '' : ` (${description.replace(/\.$/, '')})`}; \`upstreamBody\` has its answer.`,
    })),
    ...operatorFields(id, operator),
    // A dry run answers the request that would be sent (the service's headers redacted); nothing is sent.
    resolve: (input: unknown) => service.describe(plan, input as Record<string, unknown>),
    execute: async (input: unknown, ctx) => await service.call(plan, input as Record<string, unknown>, { signal: ctx.signal, readOnly: isReadOnly, trace: ctx.trace, principal: ctx.app.principal, ...(operator.timeoutMs === undefined ? {} : { timeoutMs: operator.timeoutMs }) }) as never,
    origin: { type: 'openapi', server: service.config.name, name: plan.name, method: plan.method, path: plan.path, ...(service.config.auth === undefined ? {} : { credential: service.config.auth.type }), declaredBy },
  }
}
