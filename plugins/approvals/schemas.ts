import { z } from 'zod'
import { EFFECTS } from '../../src/index.js'

/** The approval resource: the 202 body of a call that waits for a person, and `GET /approvals/{id}`. */
export const ApprovalSchema = z.object({
  id: z.string().describe('The approval id: send it back as `Approval-Id` once approved'),
  status: z.enum(['pending', 'approved', 'rejected', 'expired', 'consumed']).describe('consumed: the approved call ran (a repeat replays its answer)'),
  tool: z.string(),
  kind: z.string(),
  effects: z.array(z.enum(EFFECTS)).describe('The tool\'s declared effects (signals for the approver, not a gate)'),
  inputDigest: z.string().describe('SHA-256 (base64url) of the parsed input in canonical JSON: the approval runs this input only'),
  input: z.unknown().describe('The parsed input, for the approver to read'),
  escalate: z.boolean().describe('The call asks to escalate'),
  reasons: z.array(z.enum(['tool', 'rule', 'escalation', 'limit'])).describe('What asked for approval: the tool\'s declaration, an operator rule, an escalation, a limit past its count'),
  limits: z.array(z.string()).optional().describe('The limits past their count that asked (reason `limit`), as `GET /limits` names them'),
  requestedBy: z.string(),
  requestedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().describe('Pending: when it expires undecided. Approved: until when it may be used'),
  approvers: z.array(z.string()).optional().describe('Only these principals may decide it'),
  decidedBy: z.string().optional(),
  decidedAt: z.iso.datetime().optional(),
  note: z.string().optional(),
  consumedAt: z.iso.datetime().optional(),
}).meta({ id: 'Approval', description: 'A call waiting for (or given) a person\'s approval' })

export const DecisionBody = z.object({
  note: z.string().max(1_000).optional().describe('Passed back to the requester (shown with a rejection)'),
}).strict()
