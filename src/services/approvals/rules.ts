import type { ApprovalRule } from '../../core/types.js'
import { compileGlob } from '../auth/glob.js'
import { EVERYONE } from '../auth/rules.js'
import type { Config } from '../config.js'

interface Compiled {
  readonly principal: string
  readonly tools: readonly RegExp[]
  readonly approvers: readonly string[]
}

/**
 * The operator's approval rules, compiled once: does a call of `toolId` by `principalId` need a
 * person's approval, and who may give it? Every matching rule counts; their approvers are
 * merged (a rule without approvers leaves it to anyone with the approver scope, unless another
 * matching rule names some).
 *
 * @example
 * const ruleFor = compileApprovalRules([{ tools: ['ledger_*'], principal: '*', approvers: ['cfo'] }])
 * ruleFor('agent', 'ledger_transfer') // { approvers: ['cfo'] }
 * ruleFor('agent', 'time_now')        // undefined
 */
export function compileApprovalRules (rules: Config['approvalRules']): (principalId: string, toolId: string) => ApprovalRule | undefined {
  if (rules.length === 0) return () => undefined
  const compiled: Compiled[] = rules.map(rule => ({ principal: rule.principal, tools: rule.tools.map(compileGlob), approvers: rule.approvers }))
  return (principalId, toolId) => {
    let matched = false
    const approvers = new Set<string>()
    for (const rule of compiled) {
      if (rule.principal !== EVERYONE && rule.principal !== principalId) continue
      if (!rule.tools.some(glob => glob.test(toolId))) continue
      matched = true
      for (const approver of rule.approvers) approvers.add(approver)
    }
    return matched ? { approvers: [...approvers] } : undefined
  }
}
