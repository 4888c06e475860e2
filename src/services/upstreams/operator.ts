import type { z } from 'zod'
import type { GatewayApp } from '../../core/app-context.js'
import { UpstreamError } from '../../core/errors.js'
import { defineSchema } from '../../core/schema-adapter.js'
import type { ToolDeclaration } from '../../core/tool.js'
import { compileGlob } from '../auth/glob.js'
import type { OperatorDeclaration } from './file.js'
import { compileRule, type Rule } from './rules.js'

/*
 * What every fronted tool takes from the operator's declaration the same way, MCP tool or
 * HTTP operation: which entries apply, and the rules (`active`, `authorize`,
 * `requiresApproval`) as declaration fields.
 */

type Declaration = ToolDeclaration<z.ZodType, z.ZodType, GatewayApp>

/** The operator's declarations that apply to `id`: every glob that matches, in file order, then the exact id. */
export function operatorFor (id: string, tools: Readonly<Record<string, OperatorDeclaration>>): OperatorDeclaration {
  let merged: OperatorDeclaration = {}
  for (const [key, declaration] of Object.entries(tools)) {
    if (key !== id && /[*?]/.test(key) && compileGlob(key).test(id)) merged = { ...merged, ...declaration }
  }
  return tools[id] === undefined ? merged : { ...merged, ...tools[id] }
}

/** The operator's rules and plain fields as declaration fields. Throws a `ConfigError` when a rule does not compile. */
export function operatorFields (id: string, operator: OperatorDeclaration): Pick<Declaration, 'active' | 'authorize' | 'requiresApproval' | 'selfConcurrency' | 'timeoutMs' | 'requiresIdempotencyKey' | 'shortDescription'> {
  const active = compileRule(id, 'active', operator.active)
  const authorize = compileRule(id, 'authorize', operator.authorize)
  const requiresApproval = compileRule(id, 'requiresApproval', operator.requiresApproval)
  return {
    ...(operator.shortDescription === undefined ? {} : { shortDescription: operator.shortDescription }),
    ...(operator.selfConcurrency === undefined ? {} : { selfConcurrency: operator.selfConcurrency }),
    ...(operator.timeoutMs === undefined ? {} : { timeoutMs: operator.timeoutMs }),
    ...(operator.requiresIdempotencyKey === undefined ? {} : { requiresIdempotencyKey: operator.requiresIdempotencyKey }),
    ...(active === undefined ? {} : { active: activeOf(active) }),
    ...(requiresApproval === undefined ? {} : { requiresApproval: approvalOf(requiresApproval) }),
    authorize: authorizeOf(id, authorize),
  }
}

function activeOf (rule: Rule | boolean): (app: GatewayApp) => boolean {
  if (typeof rule === 'boolean') return () => rule
  return app => rule(undefined, app.principal)
}

function approvalOf (rule: Rule | boolean): boolean | ((input: unknown, ctx: { app: GatewayApp }) => boolean) {
  if (typeof rule === 'boolean') return rule
  return (input, ctx) => rule(input, ctx.app.principal)
}

function authorizeOf (id: string, rule: Rule | boolean | undefined): (input: unknown, ctx: { app: GatewayApp }) => void {
  if (rule === undefined || rule === true) return () => {}
  const denied = (): never => { throw new UpstreamError('TOOLGATE_DENIED', `the operator's authorize rule for "${id}" refused this call`) }
  if (rule === false) return denied
  return (input, ctx) => { if (!rule(input, ctx.app.principal)) denied() }
}

/** An upstream JSON Schema as a tool schema; the gateway enforces the JSON Schema itself on every value (`parse` adds nothing). */
export function jsonSchema (schema: Record<string, unknown>): z.ZodType {
  return defineSchema<unknown>({ jsonSchema: schema, parse: value => value }) as unknown as z.ZodType
}
