import { describe, expect, it } from 'vitest'
import shipped, { createApprovalTools, GRANT_SCOPE } from '../../tools/approval.js'
import { ApprovalDesk } from '../../tools/approval/desk.js'
import { defineToolCatalog } from '../../src/index.js'
import { expectFailure, fakeApp, harness } from './app.js'

const asker = fakeApp({ principal: { id: 'agent' } })
const person = fakeApp({ principal: { id: 'ops', scopes: ['tools:call', GRANT_SCOPE] } })

interface Pending { ticket: string, question: string, requestedBy: string }

function approvals (desk = new ApprovalDesk()) {
  return { desk, h: harness(createApprovalTools(desk), asker) }
}

async function waitForTicket (desk: ApprovalDesk): Promise<Pending> {
  for (let i = 0; i < 100; i++) {
    const [pending] = desk.list()
    if (pending !== undefined) return pending
    await new Promise(resolve => setTimeout(resolve, 5))
  }
  throw new Error('no ticket opened')
}

describe('approval_request / approval_list / approval_grant', () => {
  it('waits until a person approves, then returns the decision', async () => {
    const { desk, h } = approvals()
    const asking = h.call('approval_request', { question: 'Deploy v2 to production?' })
    const pending = await waitForTicket(desk)
    const { value: listed } = await h.call<{ pending: Pending[] }>('approval_list', {}, { app: person })
    expect(listed.pending).toEqual([expect.objectContaining({ ticket: pending.ticket, question: 'Deploy v2 to production?', requestedBy: 'agent' })])
    expect(asker.logs).toContainEqual(expect.objectContaining({ level: 'info', obj: { ticket: pending.ticket, requestedBy: 'agent' } }))

    const { value: granted } = await h.call('approval_grant', { ticket: pending.ticket, decision: 'approve', note: 'go' }, { app: person })
    expect(granted).toMatchObject({ ticket: pending.ticket, approved: true, requestedBy: 'agent' })
    const { value } = await asking
    expect(value).toMatchObject({ ticket: pending.ticket, approved: true, decidedBy: 'ops', note: 'go' })
    expect(desk.list()).toEqual([])
  })

  it('returns a denial as an answer, not an error', async () => {
    const { desk, h } = approvals()
    const asking = h.call('approval_request', { question: 'Delete the backups?' })
    const { ticket } = await waitForTicket(desk)
    await h.call('approval_grant', { ticket, decision: 'deny' }, { app: person })
    expect((await asking).value).toMatchObject({ approved: false, decidedBy: 'ops', note: null })
  })

  it('does not time out: it is interactive with timeoutMs Infinity, even with a tiny default timeout', async () => {
    const desk = new ApprovalDesk()
    const catalog = defineToolCatalog(createApprovalTools(desk), { core: { defaultTimeoutMs: 10 } })
    const asking = catalog.bind({ app: asker, domain: 'agent' }).invoke({ toolId: 'approval_request', input: { question: 'ok?' } })
    const { ticket } = await waitForTicket(desk)
    await new Promise(resolve => setTimeout(resolve, 50))
    await catalog.bind({ app: person, domain: 'ops' }).invoke({ toolId: 'approval_grant', input: { ticket, decision: 'approve' } })
    expect((await asking).value).toMatchObject({ approved: true })
    expect(shipped[0]).toMatchObject({ id: 'approval_request', interactive: true, timeoutMs: Infinity })
  })

  it('cancelling the waiting call withdraws its ticket; granting it then is 404 TICKET_NOT_FOUND', async () => {
    const { desk, h } = approvals()
    const controller = new AbortController()
    const asking = h.call('approval_request', { question: 'wait?' }, { signal: controller.signal })
    const { ticket } = await waitForTicket(desk)
    controller.abort()
    await expectFailure(asking, 499, 'TOOLGATE_CANCELLED')
    expect(desk.list()).toEqual([])
    await expectFailure(h.call('approval_grant', { ticket, decision: 'approve' }, { app: person }), 404, 'TICKET_NOT_FOUND')
  })

  it('bounds the pending tickets: 429 TOO_MANY_PENDING_APPROVALS', async () => {
    const { desk, h } = approvals(new ApprovalDesk(2))
    const controller = new AbortController()
    const waiting = [1, 2].map(i => h.call('approval_request', { question: `q${i}` }, { signal: controller.signal }))
    while (desk.list().length < 2) await new Promise(resolve => setTimeout(resolve, 5))
    await expectFailure(h.call('approval_request', { question: 'q3' }), 429, 'TOO_MANY_PENDING_APPROVALS')
    controller.abort()
    await Promise.allSettled(waiting)
  })

  it('authorize denies granting without the approvals:grant scope, and the tools are not offered to such principals', async () => {
    const { desk, h } = approvals()
    const controller = new AbortController()
    const asking = h.call('approval_request', { question: 'mine?' }, { signal: controller.signal })
    const { ticket } = await waitForTicket(desk)
    await expectFailure(h.call('approval_grant', { ticket, decision: 'approve' }), 404, 'TOOLGATE_NOT_FOUND')
    const catalog = defineToolCatalog(createApprovalTools(desk))
    expect(catalog.active(asker).map(t => t.id)).toEqual(['approval_request'])
    expect(catalog.active(person).map(t => t.id)).toEqual(['approval_request', 'approval_list', 'approval_grant'])
    // `active` is no authorization: authorize checks the scope itself.
    const grant = catalog.get('approval_grant')!
    expect(() => grant.authorize({ ticket, decision: 'approve' }, { app: asker } as never)).toThrow(/approvals:grant/)
    controller.abort()
    await asking.catch(() => {})
  })

  it('authorize denies deciding your own request', async () => {
    const { desk, h } = approvals()
    const selfApprover = fakeApp({ principal: { id: 'agent', scopes: [GRANT_SCOPE] }, domain: 'other-session' })
    const controller = new AbortController()
    const asking = h.call('approval_request', { question: 'self?' }, { signal: controller.signal })
    const { ticket } = await waitForTicket(desk)
    const error = await expectFailure(h.call('approval_grant', { ticket, decision: 'approve' }, { app: selfApprover }), 403, 'TOOLGATE_DENIED')
    expect(error.message).toMatch(/your own/)
    controller.abort()
    await asking.catch(() => {})
  })

  it('validates the ticket and decision', async () => {
    const { h } = approvals()
    await expectFailure(h.call('approval_grant', { ticket: 'not-a-uuid', decision: 'approve' }, { app: person }), 400, 'TOOLGATE_INVALID_INPUT')
    await expectFailure(h.call('approval_grant', { ticket: crypto.randomUUID(), decision: 'maybe' }, { app: person }), 400, 'TOOLGATE_INVALID_INPUT')
    await expectFailure(h.call('approval_request', { question: '   ' }), 400, 'TOOLGATE_INVALID_INPUT')
  })

  it('declares the grant as affecting others', () => {
    expect(shipped.find(t => t.id === 'approval_grant')).toMatchObject({ effects: ['affects-others'], isReadOnly: false })
  })
})
