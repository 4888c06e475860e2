// @ts-check
/*
 * The operators' console, served as a file under the page's CSP nonce (page-html.ts). Plain
 * browser JavaScript (no build step), linted with browser globals and type-checked
 * (`tsconfig.page.json`); every value from the gateway enters the DOM as text, never as markup.
 * It reads and never writes: calls by long polling (one request waits for the next call), the
 * rest by conditional polling (a 304 while nothing changed), all paused while the tab is hidden.
 * The credential is an API key in this tab's sessionStorage (shared with the approvals page),
 * or the pages' HttpOnly sign-in cookie, which the browser sends by itself.
 */
(() => {
'use strict'
const KEY = 'toolgate-approvals-key'
const POLL_MS = 5000
const CALLS_KEPT = 200
const CALL_WAIT_MS = 20000
const CALLS_PACE_MS = 1000
const $ = id => document.getElementById(id)
/** @param {string} id */
const input = id => /** @type {HTMLInputElement} */ ($(id))
/** @param {string} id */
const select = id => /** @type {HTMLSelectElement} */ ($(id))

let signedIn = false
let callsAfter = 0
let primed = false
/** @type {any[]} */
let calls = []
/** @type {any[]} */
let tools = []
const etags = new Map()
/** @type {Record<string, any>} */
const charts = {}
const timers = []
let generation = 0

function el (tag, text, className) {
  const node = document.createElement(tag)
  if (text !== undefined && text !== null) node.textContent = String(text)
  if (className) node.className = className
  return node
}
function chip (text, className) {
  return el('span', text, `chip ${className || ''}`)
}
function announce (text) {
  const region = $('announce')
  region.append(el('p', text))
  while (region.childElementCount > 10) region.firstElementChild.remove()
}
function notice (text) {
  $('notice').textContent = text
  $('notice').hidden = text === ''
}
function clock (iso) {
  const at = new Date(iso)
  return at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' })
}

function credentialHeaders () {
  const key = sessionStorage.getItem(KEY)
  if (!key) return {}
  return /^bearer\s/i.test(key) ? { authorization: key } : { 'x-api-key': key }
}
/**
 * One read of the gateway's: JSON, or null when it answered 304 (nothing new). A 401 or 403
 * signs the page out, saying why; anything else is a notice and the next poll tries again.
 * @param {string} path
 * @param {RequestInit & { conditional?: boolean }} [init]
 */
async function read (path, init) {
  init = init || {}
  const headers = Object.assign({ accept: 'application/json' }, credentialHeaders())
  if (init.conditional && etags.has(path)) headers['if-none-match'] = etags.get(path)
  const response = await fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, init, { headers }))
  if (response.status === 304) return null
  if (response.status === 401 || response.status === 403) {
    signOut(response.status === 403 ? await refusal(response) : 'Sign in to see the console.')
    throw new Error('signed out')
  }
  if (!response.ok) {
    let detail = response.statusText
    try { detail = (await response.json()).detail || detail } catch { /* not problem+json */ }
    const error = new Error(detail)
    error.name = String(response.status)
    throw error
  }
  if (init.conditional) etags.set(path, response.headers.get('etag'))
  return await response.json()
}
async function refusal (response) {
  let detail = ''
  try { detail = (await response.json()).detail || '' } catch { /* not problem+json */ }
  return `Refused: this credential may not open the console${detail ? ` (${detail})` : ''}. It needs the scope gateway:read.`
}

// ---- Sign-in ----------------------------------------------------------------------------

function signOut (why) {
  signedIn = false
  generation++
  for (const timer of timers.splice(0)) clearTimeout(timer)
  etags.clear()
  $('board').hidden = true
  $('nav').hidden = true
  $('who').hidden = true
  $('signin').hidden = false
  $('signin-error').textContent = why || ''
}
async function signIn () {
  try {
    // Any data route tells whether this credential opens the console: 200, or 401 / 403.
    await read('console/upstreams')
  } catch {
    return
  }
  signedIn = true
  const mine = ++generation
  $('signin').hidden = true
  $('board').hidden = false
  $('nav').hidden = false
  $('who').hidden = false
  notice('')
  etags.clear()
  calls = []
  callsAfter = 0
  primed = false
  followCalls(mine)
  every(mine, refreshSeries, POLL_MS)
  every(mine, refreshUpstreams, POLL_MS)
  every(mine, refreshApprovals, POLL_MS)
  every(mine, refreshCatalog, 3 * POLL_MS)
  every(mine, refreshAudit, 2 * POLL_MS)
}
$('key-form').addEventListener('submit', event => {
  event.preventDefault()
  const key = input('key').value.trim()
  if (!key) return
  sessionStorage.setItem(KEY, key)
  input('key').value = ''
  void signIn()
})
$('signout').addEventListener('click', () => {
  sessionStorage.removeItem(KEY)
  // The sign-in cookie, when there is one, is the gateway's to forget.
  void fetch('approvals/ui/logout', { method: 'POST', credentials: 'same-origin' }).finally(() => { signOut('Signed out.') })
})

/** Run `task` now and then every `ms` while this sign-in lasts and the tab is visible. */
function every (mine, task, ms) {
  const run = async () => {
    if (mine !== generation) return
    if (document.visibilityState !== 'hidden') {
      try {
        await task()
        if (mine === generation) notice('')
      } catch (error) {
        if (mine === generation && signedIn) notice(`Could not reach the gateway: ${error.message}. Trying again.`)
      }
    }
    if (mine === generation) timers.push(setTimeout(run, ms))
  }
  void run()
}

// ---- Calls, live ------------------------------------------------------------------------

async function followCalls (mine) {
  while (mine === generation) {
    if (document.visibilityState === 'hidden') {
      await new Promise(resolve => setTimeout(resolve, 1000))
      continue
    }
    try {
      // The first read answers at once (the latest held); every later one waits, even on a gateway that has served no call yet.
      const wait = primed ? CALL_WAIT_MS : 0
      const answer = await read(`console/calls?after=${callsAfter}&max=100&waitMs=${wait}`)
      if (mine !== generation) return
      callsAfter = answer.next
      primed = true
      if (answer.calls.length > 0) {
        calls = calls.concat(answer.calls).slice(-CALLS_KEPT)
        if (!input('calls-pause').checked) renderCalls()
        if (wait > 0) announce(`${answer.calls.length} new call${answer.calls.length === 1 ? '' : 's'}`)
        // At most one read a second: under load the long poll would otherwise answer at once,
        // hundreds of times a second, and a person reads no faster than this.
        await new Promise(resolve => setTimeout(resolve, CALLS_PACE_MS))
      }
    } catch (error) {
      if (mine !== generation || !signedIn) return
      notice(`Could not reach the gateway: ${error.message}. Trying again.`)
      await new Promise(resolve => setTimeout(resolve, POLL_MS))
    }
  }
}

const NOT_FAILED = new Set(['ok', 'dry_run', 'replayed', 'approval_pending'])
function callMatches (call) {
  const q = input('calls-q').value.trim().toLowerCase()
  const effect = select('calls-effect').value
  const outcome = select('calls-outcome').value
  if (q && !call.tool.toLowerCase().includes(q) && !call.principal.toLowerCase().includes(q)) return false
  if (effect === 'none' ? call.effects.length > 0 : effect && !call.effects.includes(effect)) return false
  if (outcome === 'ok' && !NOT_FAILED.has(call.outcome)) return false
  if (outcome === 'failed' && NOT_FAILED.has(call.outcome)) return false
  return true
}
function renderCalls () {
  const body = $('calls')
  const open = new Set([...body.querySelectorAll('tr.detail')].map(row => /** @type {HTMLElement} */ (row).dataset.call))
  body.replaceChildren()
  const shown = calls.filter(callMatches).reverse()
  for (const call of shown) {
    const row = el('tr', undefined, NOT_FAILED.has(call.outcome) ? '' : 'failed')
    row.dataset.call = call.callId
    row.tabIndex = 0
    row.title = 'Open its audit line'
    row.append(el('td', clock(call.time)), el('td', call.tool, 'mono'), el('td', call.principal))
    const outcome = el('td')
    outcome.append(chip(call.outcome, NOT_FAILED.has(call.outcome) ? 'ok' : 'bad'), el('span', ` ${call.status}`, 'muted'))
    if (call.replayed) outcome.append(chip('replay'))
    if (call.approvalId) outcome.append(chip('approved'))
    if (call.dryRun) outcome.append(chip('dry run'))
    row.append(outcome, el('td', call.durationMs, 'num'))
    const effects = el('td')
    for (const effect of call.effects) effects.append(chip(effect, `effect-${effect}`))
    row.append(effects, el('td', call.bundle ? `${call.transport} · ${call.bundle}` : call.transport))
    const toggle = () => { void toggleCall(row, call) }
    row.addEventListener('click', toggle)
    row.addEventListener('keydown', event => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); toggle() } })
    body.append(row)
    if (open.has(call.callId)) void toggleCall(row, call)
  }
  $('calls-empty').hidden = shown.length > 0
  $('calls-empty').textContent = calls.length === 0 ? 'No call yet. Calls appear here as they finish.' : 'No call matches the filters.'
  $('calls-count').textContent = `${shown.length} of the last ${calls.length} on this replica`
}
async function toggleCall (row, call) {
  const next = row.nextElementSibling
  if (next && next.classList.contains('detail')) {
    next.remove()
    return
  }
  const detail = el('tr', undefined, 'detail')
  detail.dataset.call = call.callId
  const cell = el('td')
  cell.colSpan = 7
  const facts = el('dl', undefined, 'facts')
  const fact = (name, value) => { if (value !== undefined && value !== '') facts.append(el('dt', name), el('dd', value)) }
  fact('Call', call.callId)
  fact('Status', `${call.status}${call.code ? ` ${call.code}` : ''}`)
  fact('Queued', `${call.queueMs} ms`)
  fact('Executed', call.executed ? 'yes: it may have taken effect' : 'no')
  fact('Trace', call.traceId)
  fact('Approval', call.approvalId)
  fact('Limit', call.limit)
  cell.append(facts)
  const audit = el('pre', 'Reading its audit line…', 'json')
  cell.append(audit)
  detail.append(cell)
  row.after(detail)
  try {
    const answer = await read(`console/audit?max=1&callId=${encodeURIComponent(call.callId)}`)
    audit.textContent = answer.lines.length > 0 ? JSON.stringify(answer.lines[0], null, 2) : 'No audit line: read-only calls are not audited (or the line is older than the file\'s tail).'
  } catch (error) {
    audit.textContent = error.name === '404' ? 'This gateway keeps no audit file.' : `Could not read it: ${error.message}`
  }
}
for (const id of ['calls-q', 'calls-effect', 'calls-outcome', 'calls-pause']) $(id).addEventListener('input', renderCalls)

// ---- Charts -----------------------------------------------------------------------------

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d']
const OUTCOME_GROUPS = { ok: ['ok', 'dry_run', 'replayed'], waiting: ['approval_pending'], refused: ['invalid_input', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'rate_limited'], failed: null }

async function refreshSeries () {
  let answer
  try {
    answer = await read('console/series', { conditional: true })
  } catch (error) {
    if (error.name === '404') { $('charts-off').hidden = false; return }
    throw error
  }
  if (answer === null) return
  const points = answer.points
  $('charts-span').textContent = `every ${answer.intervalMs / 1000} s, this replica`
  const times = points.map(p => Date.parse(p.at) / 1000)
  const rate = (p, n) => Math.round((n / p.seconds) * 100) / 100
  const groups = Object.keys(OUTCOME_GROUPS)
  const groupOf = outcome => groups.find(g => OUTCOME_GROUPS[g] && OUTCOME_GROUPS[g].includes(outcome)) || 'failed'
  draw('chart-outcomes', times, groups.map(group => ({
    label: group, values: points.map(p => rate(p, Object.entries(p.byOutcome).filter(([o]) => groupOf(o) === group).reduce((s, [, n]) => s + n, 0))),
  })))
  const effects = [...new Set(points.flatMap(p => Object.keys(p.byEffect)))].sort()
  draw('chart-effects', times, effects.map(effect => ({ label: effect, values: points.map(p => rate(p, p.byEffect[effect] || 0)) })))
  const busiest = new Map()
  for (const p of points) for (const t of p.tools) busiest.set(t.tool, (busiest.get(t.tool) || 0) + t.calls)
  const top = [...busiest.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([tool]) => tool)
  draw('chart-latency', times, top.map(tool => ({
    label: tool, values: points.map(p => { const t = p.tools.find(x => x.tool === tool); return t ? t.p99Ms : null }),
  })))
  draw('chart-errors', times, [
    { label: 'failures/s', values: points.map(p => rate(p, p.errors)) },
    { label: 'queue wait p99 ms', values: points.map(p => p.queueWaitP99Ms) },
  ])
  const last = points[points.length - 1]
  const stats = $('stats')
  stats.replaceChildren()
  if (last) {
    const total = Object.values(last.byOutcome).reduce((s, n) => s + n, 0)
    const stat = (name, value) => { const box = el('div', undefined, 'stat'); box.append(el('b', value), el('span', name)); stats.append(box) }
    stat('calls/s now', rate(last, total))
    stat('failures/s now', rate(last, last.errors))
    stat('in flight', last.inFlight)
    stat('queue wait p99', last.queueWaitP99Ms === null ? '–' : `${last.queueWaitP99Ms} ms`)
  }
}
/**
 * One chart: made at the first draw (or when its series change), else given the new data.
 * @param {string} id
 * @param {number[]} times
 * @param {Array<{ label: string, values: Array<number | null> }>} series
 */
function draw (id, times, series) {
  const box = $(id)
  const width = Math.max(240, box.clientWidth || 320)
  const labels = series.map(s => s.label).join('\u0000')
  const data = /** @type {uPlot.AlignedData} */ ([times, ...series.map(s => s.values)])
  const current = charts[id]
  if (current && current.labels === labels) {
    current.plot.setData(data)
    if (current.width !== width) { current.plot.setSize({ width, height: 180 }); current.width = width }
    return
  }
  if (current) current.plot.destroy()
  const options = /** @type {uPlot.Options} */ ({
    width,
    height: 180,
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [{ stroke: '#888', grid: { stroke: 'rgba(128,128,128,0.15)' } }, { stroke: '#888', grid: { stroke: 'rgba(128,128,128,0.15)' }, size: 50 }],
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: PALETTE[i % PALETTE.length], width: 2, spanGaps: false, points: { show: false } }))],
  })
  charts[id] = { plot: new uPlot(options, data, box), labels, width }
}
window.addEventListener('resize', () => {
  for (const id of Object.keys(charts)) {
    const width = Math.max(240, $(id).clientWidth || 320)
    if (charts[id].width !== width) { charts[id].plot.setSize({ width, height: 180 }); charts[id].width = width }
  }
})

// ---- Catalog ----------------------------------------------------------------------------

async function refreshCatalog () {
  const answer = await read('console/tools', { conditional: true })
  if (answer === null) return
  tools = answer.tools
  const effects = [...new Set(tools.flatMap(tool => tool.effects))].sort()
  for (const id of ['tools-effect', 'calls-effect']) {
    const menu = select(id)
    const known = new Set([...menu.options].map(option => option.value))
    for (const effect of effects.concat(id === 'calls-effect' ? ['none'] : [])) {
      if (!known.has(effect)) menu.append(new Option(effect === 'none' ? 'none declared' : effect, effect))
    }
  }
  renderCatalog()
}
function toolMatches (tool) {
  const q = input('tools-q').value.trim().toLowerCase()
  const effect = select('tools-effect').value
  const origin = select('tools-origin').value
  const state = select('tools-state').value
  if (q && !tool.id.toLowerCase().includes(q) && !tool.description.toLowerCase().includes(q)) return false
  if (effect === 'none' ? tool.effects.length > 0 : effect && !tool.effects.includes(effect)) return false
  if (origin && (tool.origin ? tool.origin.type : 'local') !== origin) return false
  if (state && tool.state !== state) return false
  return true
}
function renderCatalog () {
  const list = $('tools')
  const open = new Set([...list.querySelectorAll('details[open]')].map(d => /** @type {HTMLElement} */ (d).dataset.tool))
  list.replaceChildren()
  const shown = tools.filter(toolMatches)
  for (const tool of shown) {
    const item = /** @type {HTMLDetailsElement} */ (el('details', undefined, 'tool'))
    item.dataset.tool = tool.id
    const summary = el('summary')
    summary.append(el('span', tool.id, 'mono'))
    for (const effect of tool.effects) summary.append(chip(effect, `effect-${effect}`))
    if (tool.effects.length === 0) summary.append(chip('no effects', 'quiet'))
    summary.append(chip(tool.origin ? `${tool.origin.type} · ${tool.origin.server}` : 'declared here', 'quiet'))
    if (tool.state !== 'serving') summary.append(chip(`upstream ${tool.state}`, 'bad'))
    item.append(summary)
    item.addEventListener('toggle', () => { if (item.open && item.childElementCount === 1) item.append(toolDetail(tool)) })
    if (open.has(tool.id)) item.open = true
    list.append(item)
  }
  $('catalog-count').textContent = `${shown.length} of ${tools.length}`
}
function toolDetail (tool) {
  const box = el('div', undefined, 'detail-body')
  box.append(el('p', tool.description))
  const facts = el('dl', undefined, 'facts')
  const fact = (name, value) => facts.append(el('dt', name), el('dd', value))
  fact('Kind', tool.kind)
  fact('Timeout', tool.timeoutMs === null ? 'none (interactive)' : `${tool.timeoutMs} ms`)
  fact('Flags', Object.entries(tool.flags).filter(([, on]) => on).map(([flag]) => flag).join(', ') || 'none')
  if (tool.origin) {
    fact('Runs on', `${tool.origin.server} (${tool.origin.type}) as ${tool.origin.method ? `${tool.origin.method} ${tool.origin.path}` : tool.origin.name}`)
    if (tool.origin.credential) fact('Reaches it with', tool.origin.credential)
  }
  box.append(facts)
  if (tool.origin) {
    box.append(el('h4', 'Who declared each field'))
    const table = el('table', undefined, 'declared')
    const head = el('tr')
    head.append(el('th', 'Field'), el('th', 'Declared by'))
    table.append(head)
    for (const [field, by] of Object.entries(tool.origin.declaredBy)) {
      const row = el('tr')
      const who = el('td')
      who.append(chip(by, `by-${by}`))
      row.append(el('td', field, 'mono'), who)
      table.append(row)
    }
    box.append(table)
  }
  const rules = Object.entries(tool.rules)
  if (rules.length > 0) {
    box.append(el('h4', 'The operator\'s rules'))
    const list = el('dl', undefined, 'facts')
    for (const [name, rule] of rules) list.append(el('dt', name), el('dd', String(rule), 'mono'))
    box.append(list)
  }
  box.append(el('h4', 'Approval'))
  box.append(el('p', tool.approval.length === 0 ? 'No call of it waits for a person.' : tool.approval.map(a => a.by === 'rule'
    ? `an approval rule for ${a.principal === '*' ? 'everyone' : a.principal}${a.approvers && a.approvers.length > 0 ? `, decided by ${a.approvers.join(', ')}` : ''}`
    : a.by === 'declaration' ? 'its declaration asks' : 'an escalation asks').join('; ') + '.'))
  if (tool.limits.length > 0) {
    box.append(el('h4', 'Limits'))
    const list = el('ul', undefined, 'plain')
    for (const limit of tool.limits) list.append(el('li', `${limit.name}: ${limit.kind} of ${limit.max}${limit.amount ? ` (${limit.amount})` : ''} per ${limit.window} s, per ${limit.per}, ${limit.over === 'approve' ? 'then asks a person' : 'then refused'} (declared by ${limit.declaredBy})`))
    box.append(list)
  }
  for (const [title, schema] of [['Input schema', tool.inputSchema], ['Output schema', tool.outputSchema]]) {
    const fold = el('details')
    fold.append(el('summary', title), el('pre', JSON.stringify(schema, null, 2), 'json'))
    box.append(fold)
  }
  return box
}
for (const id of ['tools-q', 'tools-effect', 'tools-origin', 'tools-state']) $(id).addEventListener('input', renderCatalog)

// ---- Upstreams, approvals, audit ---------------------------------------------------------

async function refreshUpstreams () {
  const answer = await read('console/upstreams', { conditional: true })
  if (answer === null) return
  const body = $('upstreams')
  const was = new Map([...body.querySelectorAll('tr[data-name]')].map(row => [/** @type {HTMLElement} */ (row).dataset.name, /** @type {HTMLElement} */ (row).dataset.state]))
  body.replaceChildren()
  $('upstreams-none').hidden = answer.upstreams.length > 0
  for (const upstream of answer.upstreams) {
    const row = el('tr')
    row.dataset.name = upstream.name
    row.dataset.state = upstream.state
    const state = el('td')
    state.append(chip(upstream.state, upstream.state === 'up' ? 'ok' : 'bad'))
    if (upstream.lastError) state.append(el('div', upstream.lastError, 'small error-text'))
    row.append(el('td', upstream.name, 'mono'), state, el('td', upstream.protocolVersion ? `${upstream.transport} · ${upstream.protocolVersion}` : upstream.transport),
      el('td', upstream.tools, 'num'), el('td', upstream.restarts, 'num'), el('td', upstream.inFlight, 'num'),
      el('td', `${upstream.state === 'up' ? 'up since' : 'last seen up'} ${clock(upstream.since)}`))
    body.append(row)
    const before = was.get(upstream.name)
    if (before !== undefined && before !== upstream.state) announce(`Upstream ${upstream.name} is ${upstream.state}`)
  }
  // Tools of an upstream that changed state show it in the catalog.
  if ([...was.entries()].some(([name, state]) => answer.upstreams.some(u => u.name === name && u.state !== state))) {
    etags.delete('console/tools')
    await refreshCatalog()
  }
}

async function refreshApprovals () {
  const answer = await read('approvals/ui/feed', { conditional: true })
  if (answer === null) return
  $('viewer').textContent = answer.viewer.id
  const list = $('approvals')
  list.replaceChildren()
  for (const pending of answer.pending) {
    const item = el('li')
    item.append(el('span', pending.tool, 'mono'), el('span', ` requested by ${pending.requestedBy} at ${clock(pending.requestedAt)}`))
    for (const effect of pending.effects || []) item.append(chip(effect, `effect-${effect}`))
    list.append(item)
  }
  $('approvals-none').hidden = answer.pending.length > 0
  $('approvals-count').textContent = answer.viewer.mayDecide ? `${answer.pending.length} pending` : `${answer.pending.length} pending of yours (you may not decide)`
  const decisions = $('decisions')
  decisions.replaceChildren()
  for (const decision of answer.recent.slice(0, 8)) {
    decisions.append(el('li', `${clock(decision.at)} ${decision.tool}: ${decision.status}${decision.decidedBy ? ` by ${decision.decidedBy}` : ''} (asked by ${decision.requestedBy})`))
  }
  if (answer.recent.length === 0) decisions.append(el('li', 'None yet.', 'muted'))
}

async function refreshAudit () {
  let answer
  try {
    answer = await read('console/audit?max=20')
  } catch (error) {
    if (error.name !== '404') throw error
    $('audit-none').hidden = false
    $('audit-tools').hidden = true
    return
  }
  const body = $('audit')
  body.replaceChildren()
  for (const line of answer.lines.slice().reverse()) {
    const row = el('tr')
    row.append(el('td', line.seq, 'num'), el('td', line.time ? clock(line.time) : ''), el('td', line.event || ''), el('td', line.tool || '', 'mono'),
      el('td', line.principal || line.decidedBy || ''), el('td', line.outcome || line.decision || ''))
    body.append(row)
  }
}
$('verify').addEventListener('click', async () => {
  const button = /** @type {HTMLButtonElement} */ ($('verify'))
  const verdict = $('verdict')
  button.disabled = true
  verdict.hidden = false
  verdict.className = 'verdict'
  verdict.textContent = 'Verifying every line…'
  try {
    const result = await read('console/audit/verify', { method: 'POST' })
    verdict.className = `verdict ${result.ok ? 'good' : 'broken'}`
    verdict.textContent = result.ok
      ? `Intact: ${result.records} records, the chain ends at seq ${result.headSeq} where this gateway's does (${result.bytes} bytes in ${result.tookMs} ms, ${clock(result.at)}).`
      : `Broken at line ${result.line}: ${result.reason}. (${result.records} lines before it verify; checked ${clock(result.at)}.)`
    announce(result.ok ? 'The audit chain is intact' : `The audit chain is broken at line ${result.line}`)
  } catch (error) {
    verdict.className = 'verdict broken'
    verdict.textContent = `Could not verify: ${error.message}`
  } finally {
    button.disabled = false
  }
})

document.addEventListener('visibilitychange', () => {
  // Back from a hidden tab: read now rather than at the next tick.
  if (document.visibilityState === 'visible' && signedIn) void signIn()
})
void signIn()
})()
