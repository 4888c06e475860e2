import type { ApprovalView } from '../src/index.js'

/*
 * The approvals page: plain server-rendered HTML, no build step, no third-party asset. The
 * buttons POST with fetch to the same origin as JSON, so the decision carries the same
 * credential as the page (a header set by the operator's auth proxy or browser), and no
 * cross-site form can make one: forms cannot send JSON, and the routes refuse a foreign
 * `Origin` / `Sec-Fetch-Site`. The CSP allows only this page's own nonce'd script and
 * style, and no framing (an approve button must not be clickjacked).
 */

export interface PageRow {
  readonly approval: ApprovalView
  /** Why this viewer may not decide it; undefined when they may. */
  readonly cannotDecide?: string
}

export function approvalsPage (viewer: string, rows: readonly PageRow[], nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pending approvals · toolgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${nonce}">
body{font:15px/1.4 system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.5rem;vertical-align:top;text-align:left}
pre{margin:0;max-width:40rem;white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.4rem}
.effect{display:inline-block;background:#fde2e1;color:#8a1c14;border-radius:3px;padding:0 .3rem;margin:0 .2rem .2rem 0;font-size:13px}
.none{color:#777}.status{font-weight:600}.error{color:#b00}
</style></head><body>
<h1>Pending approvals</h1>
<p>Signed in as <b>${esc(viewer)}</b>. A decision is final; the requester then re-sends the call, which runs once.</p>
${rows.length === 0 ? '<p id="empty">Nothing waits for a decision.</p>' : `<table><thead><tr><th>tool</th><th>effects</th><th>input</th><th>requested</th><th>decision</th></tr></thead><tbody>
${rows.map(row).join('\n')}
</tbody></table>`}
<script nonce="${nonce}">
for (const button of document.querySelectorAll('button[data-action]')) {
  button.addEventListener('click', async () => {
    const tr = button.closest('tr')
    const out = tr.querySelector('.status')
    for (const b of tr.querySelectorAll('button')) b.disabled = true
    try {
      const response = await fetch(encodeURIComponent(tr.dataset.id) + '/' + button.dataset.action, {
        method: 'POST', credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ note: tr.querySelector('input').value || undefined }),
      })
      const body = await response.json()
      if (!response.ok) throw new Error(body.detail || response.statusText)
      out.textContent = body.status
      out.className = 'status ' + body.status
    } catch (error) {
      out.textContent = 'failed: ' + error.message
      out.className = 'status error'
      for (const b of tr.querySelectorAll('button')) b.disabled = false
    }
  })
}
</script></body></html>
`
}

function row ({ approval: a, cannotDecide }: PageRow): string {
  const effects = a.effects.length === 0 ? '<span class="none">none declared</span>' : a.effects.map(e => `<span class="effect">${esc(e)}</span>`).join('')
  const decide = cannotDecide === undefined
    ? `<input name="note" placeholder="note (optional)" maxlength="1000"> <button data-action="approve">Approve</button> <button data-action="reject">Reject</button>`
    : `<span class="none">${esc(cannotDecide)}</span>`
  return `<tr data-id="${esc(a.id)}">
<td><b>${esc(a.tool)}</b> <span class="none">(${esc(a.kind)})</span>${a.escalate ? '<br><span class="effect">escalation</span>' : ''}<br><small>${esc(a.id)}</small></td>
<td>${effects}</td>
<td><pre>${esc(JSON.stringify(a.input, null, 2))}</pre><small>digest ${esc(a.inputDigest)}</small></td>
<td>by <b>${esc(a.requestedBy)}</b><br><small>${esc(a.requestedAt)}<br>expires ${esc(a.expiresAt)}</small></td>
<td><span class="status">${esc(a.status)}</span><br>${decide}</td>
</tr>`
}

function esc (text: string): string {
  return text.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
}
