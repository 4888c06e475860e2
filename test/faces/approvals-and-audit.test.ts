/**
 * The faces share one pipeline, so approvals and the audit trail hold on every one of them:
 * an operator's approval rule cannot be bypassed over MCP, the approved retry over MCP runs
 * once, and both the MCP calls and the person's decision are lines of the audit trail.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { verifyAuditText } from '../../src/services/audit/verify.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { listeningGateway, sdkClient } from '../mcp/helpers.js'

const APPROVER = 'approver-key-0123456789'
let dir: string
let auditFile: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-faces-'))
  auditFile = join(dir, 'audit.jsonl')
})
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

interface ToolResult { isError?: boolean, structuredContent?: unknown, _meta?: Record<string, unknown>, content: Array<{ text: string }> }

describe('approvals and the audit trail over MCP', () => {
  it('an approval rule holds over MCP; once a person approves, the retry with the approval id runs once; all of it is audited', async () => {
    const { url, app } = await listeningGateway({
      apiKeys: [...API_KEYS, { principal: 'approver', sha256: hashApiKey(APPROVER), scopes: ['tools:read', 'tools:approve'] }],
      approvalRules: [{ tools: ['pay_out'] }],
      auditLog: auditFile,
    })
    const client = await sdkClient(url, KEYS.caller)
    const first = await client.callTool({ name: 'pay_out', arguments: { cents: 700 } }) as ToolResult
    expect(first.isError).toBe(true)
    const approval = first._meta?.['dev.toolgate/approval'] as { id: string, status: string, tool: string }
    expect(approval).toMatchObject({ status: 'pending', tool: 'pay_out' })
    expect(first.content[0]!.text).toContain(approval.id)

    // Not yet decided: the retry is refused, nothing runs.
    const early = await client.callTool({ name: 'pay_out', arguments: { cents: 700 }, _meta: { 'dev.toolgate/approvalId': approval.id } }) as ToolResult
    expect(early.isError).toBe(true)

    const base = url.origin
    const decided = await fetch(`${base}/approvals/${approval.id}/approve`, { method: 'POST', headers: { ...auth(APPROVER), 'content-type': 'application/json' }, body: JSON.stringify({ note: 'ok for 7.00' }) })
    expect(decided.status).toBe(200)

    const ran = await client.callTool({ name: 'pay_out', arguments: { cents: 700 }, _meta: { 'dev.toolgate/approvalId': approval.id } }) as ToolResult
    expect(ran).toMatchObject({ isError: false, structuredContent: { sent: 700 } })
    const replay = await client.callTool({ name: 'pay_out', arguments: { cents: 700 }, _meta: { 'dev.toolgate/approvalId': approval.id } }) as ToolResult
    expect(replay).toMatchObject({ isError: false, structuredContent: { sent: 700 }, _meta: { 'dev.toolgate/replayed': true } })
    // Another input under the same approval is refused.
    const other = await client.callTool({ name: 'pay_out', arguments: { cents: 9_999 }, _meta: { 'dev.toolgate/approvalId': approval.id } }) as ToolResult
    expect(other.isError).toBe(true)

    await client.close()
    await app.close()
    const text = readFileSync(auditFile, 'utf8')
    const lines = text.trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
    const payOuts = lines.filter(line => line.tool === 'pay_out' && line.event !== 'approval')
    expect(payOuts.map(line => [line.principal, line.outcome, line.status, line.code ?? null])).toEqual([
      ['caller', 'approval_pending', 202, null],
      ['caller', 'conflict', 409, 'TOOLGATE_APPROVAL_PENDING'],
      ['caller', 'ok', 200, null],
      ['caller', 'replayed', 200, null],
      ['caller', 'conflict', 422, 'TOOLGATE_APPROVAL_MISMATCH'],
    ])
    expect(lines.find(line => line.event === 'approval')).toMatchObject({ approvalId: approval.id, decision: 'approved', decidedBy: 'approver', requestedBy: 'caller', tool: 'pay_out', note: 'ok for 7.00' })
    expect(verifyAuditText(text).ok).toBe(true)
  })
})
