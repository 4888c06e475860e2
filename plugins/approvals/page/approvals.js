// @ts-check
/*
 * The approvals page's script, read from this file and sent inline under the page's CSP
 * nonce (page-html.ts). Plain browser JavaScript (no build step), linted with browser globals
 * and type-checked (`tsconfig.page.json`); every value from the gateway enters the DOM as text
 * (textContent), never as markup. The credential is an API key kept in this tab's
 * sessionStorage, or the HttpOnly sign-in cookie the browser sends by itself, or a header an
 * auth proxy adds: the page needs to know only whether the feed answers 200 or 401.
 */
(() => {
'use strict'
const KEY = 'toolgate-approvals-key'
const POLL_MS = Number(document.body.dataset.pollMs) || 2000
const FOLD_CHARS = 800
const FOLD_LINES = 16
const $ = id => document.getElementById(id)
/** @returns {HTMLInputElement} */
const keyInput = () => /** @type {HTMLInputElement} */ ($('key'))
const cards = new Map()
let seenRecent = null
let etag = null
let skewMs = 0
let timer = null
let signedIn = false
let viaCookie = false

const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
/** @type {Array<[Intl.RelativeTimeFormatUnit, number]>} */
const UNITS = [['year', 31536e6], ['month', 2592e6], ['week', 6048e5], ['day', 864e5], ['hour', 36e5], ['minute', 6e4], ['second', 1e3]]
function relative (iso) {
  const delta = Date.parse(iso) - (Date.now() + skewMs)
  if (Math.abs(delta) < 5000) return 'just now'
  for (const [unit, ms] of UNITS) {
    if (Math.abs(delta) >= ms || unit === 'second') return rtf.format(Math.round(delta / ms), unit)
  }
}
function timeOf (iso) {
  const t = el('time', relative(iso))
  t.dateTime = iso
  t.title = new Date(iso).toLocaleString()
  t.dataset.rel = ''
  return t
}
function refreshTimes () {
  for (const t of /** @type {NodeListOf<HTMLTimeElement>} */ (document.querySelectorAll('time[data-rel]'))) t.textContent = relative(t.dateTime)
}

function el (tag, text, className) {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  if (className) node.className = className
  return node
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

function credentialHeaders () {
  const key = sessionStorage.getItem(KEY)
  if (!key) return {}
  return /^bearer\s/i.test(key) ? { authorization: key } : { 'x-api-key': key }
}
function call (path, init) {
  init = init || {}
  return fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, init, {
    headers: Object.assign({ accept: 'application/json' }, credentialHeaders(), init.headers || {}),
  }))
}
async function detailOf (response) {
  try { return (await response.json()).detail || response.statusText } catch { return response.statusText }
}

async function poll () {
  clearTimeout(timer)
  try {
    const response = await call('ui/feed', { headers: etag ? { 'if-none-match': etag } : {} })
    const date = Date.parse(response.headers.get('date') || '')
    // The Date header counts whole seconds: only a clock off by more than that is corrected for.
    if (!Number.isNaN(date)) skewMs = Math.abs(date - Date.now()) > 2000 ? date - Date.now() : 0
    if (response.status === 401) {
      const hadKey = sessionStorage.getItem(KEY) !== null
      sessionStorage.removeItem(KEY)
      showSignIn(hadKey ? 'That key was not accepted.' : (signedIn ? 'Your session ended: sign in again.' : ''))
      return
    }
    if (response.status === 200) {
      etag = response.headers.get('etag')
      render(await response.json())
    } else if (response.status !== 304) {
      notice('Live updates paused: ' + await detailOf(response) + ' Retrying.')
    }
    if (response.ok || response.status === 304) notice('')
  } catch {
    notice('Live updates paused: the gateway cannot be reached. Retrying.')
  }
  schedule()
}
function schedule () {
  clearTimeout(timer)
  if (signedIn && !document.hidden) timer = setTimeout(poll, POLL_MS)
}

function showSignIn (error) {
  signedIn = false
  clearTimeout(timer)
  etag = null
  seenRecent = null
  for (const card of cards.values()) card.remove()
  cards.clear()
  $('board').hidden = true
  $('who').hidden = true
  $('signin').hidden = false
  $('signin-error').textContent = error
  keyInput().value = ''
  if (error) announce(error)
}

function render (feed) {
  const first = !signedIn
  signedIn = true
  viaCookie = feed.viewer.session === true
  $('signin').hidden = true
  $('board').hidden = false
  $('who').hidden = false
  $('viewer').textContent = feed.viewer.id
  $('scope-note').textContent = feed.viewer.mayDecide ? '' : 'You see your own requests only: deciding needs the tools:approve scope.'
  const ids = new Set(feed.pending.map(item => item.id))
  for (const [id, card] of cards) {
    if (ids.has(id) || card.dataset.settled === 'true') continue
    card.remove()
    cards.delete(id)
  }
  let previous = null
  for (const item of feed.pending) {
    let card = cards.get(item.id)
    if (card === undefined) {
      card = cardOf(item)
      cards.set(item.id, card)
      if (!first) announce('New request: ' + item.tool + ' by ' + item.requestedBy + '.')
    }
    if (previous === null) $('pending').prepend(card)
    else previous.after(card)
    previous = card
  }
  const waiting = feed.pending.length
  $('count').textContent = waiting === 0 ? '' : '(' + waiting + ')'
  $('empty').hidden = cards.size !== 0
  document.title = (waiting === 0 ? '' : '(' + waiting + ') ') + 'Approvals · toolgate'
  renderRecent(feed.recent, first)
  if (first) {
    if (waiting > 0) announce(waiting + (waiting === 1 ? ' request waits' : ' requests wait') + ' for a decision.')
    focusLinked()
  }
}

function renderRecent (recent, first) {
  const list = $('recent')
  list.replaceChildren(...recent.map(decisionItem))
  $('no-recent').hidden = recent.length !== 0
  const seen = new Set(recent.map(d => d.id + d.status))
  if (!first && seenRecent !== null) {
    for (const d of recent) {
      if (!seenRecent.has(d.id + d.status)) announce(d.tool + ' ' + d.status + (d.decidedBy ? ' by ' + d.decidedBy : '') + '.')
    }
  }
  seenRecent = seen
}

function decisionItem (d) {
  const li = el('li', undefined, 'decision')
  const head = el('p')
  head.append(el('b', d.tool), ' ', el('span', d.status, 'pill ' + d.status), ' ')
  head.append(d.decidedBy ? 'by ' + d.decidedBy + ' ' : '', timeOf(d.at))
  li.append(head, el('p', 'asked by ' + d.requestedBy, 'muted small'))
  if (d.note) li.append(el('blockquote', d.note))
  return li
}

function fact (term, ...value) {
  const row = el('div')
  const dd = el('dd')
  dd.append(...value)
  row.append(el('dt', term), dd)
  return row
}

function folded (text, summary) {
  const details = el('details')
  details.append(el('summary', summary), el('pre', text))
  return details
}

function cardOf (item) {
  const card = el('article', undefined, 'card')
  card.dataset.id = item.id
  card.id = 'a-' + item.id
  card.tabIndex = -1
  card.setAttribute('aria-labelledby', 't-' + item.id)
  const title = el('h3', undefined, 'tool')
  title.id = 't-' + item.id
  title.append(el('span', item.tool), ' ', el('span', item.kind, 'kind'))
  const badges = el('p', undefined, 'badges')
  badges.setAttribute('aria-label', 'declared effects')
  if (item.effects.length === 0) badges.append(el('span', 'no effects declared', 'badge none'))
  for (const effect of item.effects) badges.append(el('span', effect, 'badge effect'))
  if (item.escalate) badges.append(el('span', 'escalation', 'badge effect'))
  card.append(title, badges)
  if (item.description) {
    card.append(item.description.length > 300 ? folded(item.description, item.description.slice(0, 160) + '…') : el('p', item.description, 'desc'))
  }
  const facts = el('dl', undefined, 'facts')
  facts.append(
    fact('Asked by', el('b', item.requestedBy), ' ', timeOf(item.requestedAt)),
    fact('Expires', timeOf(item.expiresAt)),
    fact('May decide', item.approvers && item.approvers.length > 0 ? item.approvers.join(', ') : 'anyone with tools:approve'),
    fact('Asked because', item.reasons.map(r => r === 'tool' ? 'the tool asks' : r === 'rule' ? 'an operator rule' : r === 'limit' ? `past its limit (${(item.limits ?? []).join(', ')})` : 'an escalation').join(', ')),
  )
  card.append(facts)
  const text = JSON.stringify(item.input, null, 2) ?? 'undefined'
  const lines = text.split('\n').length
  const input = el('div', undefined, 'input')
  input.append(el('h4', 'Input'))
  input.append(text.length > FOLD_CHARS || lines > FOLD_LINES
    ? folded(text, 'Show the whole input (' + lines + ' lines, ' + (text.length / 1024).toFixed(1) + ' kB)')
    : el('pre', text))
  input.append(el('p', 'digest ' + item.inputDigest, 'muted small digest'))
  card.append(input)
  const status = el('p', '', 'status')
  status.setAttribute('role', 'status')
  if (item.cannotDecide) {
    card.append(el('p', item.cannotDecide, 'muted cannot'), status)
    return card
  }
  const form = el('form', undefined, 'decide')
  const noteId = 'n-' + item.id
  const label = el('label', 'Note for the requester (optional)')
  label.htmlFor = noteId
  const note = el('input')
  note.id = noteId
  note.name = 'note'
  note.maxLength = 1000
  note.autocomplete = 'off'
  const approve = el('button', 'Approve', 'approve')
  approve.type = 'submit'
  approve.dataset.action = 'approve'
  const reject = el('button', 'Reject', 'reject')
  reject.type = 'button'
  reject.dataset.action = 'reject'
  const buttons = el('div', undefined, 'buttons')
  buttons.append(approve, reject)
  form.append(label, note, buttons)
  form.addEventListener('submit', event => { event.preventDefault(); void decide(card, item, 'approve') })
  reject.addEventListener('click', () => { void decide(card, item, 'reject') })
  card.append(form, status)
  return card
}

async function decide (card, item, action) {
  const status = card.querySelector('.status')
  const buttons = card.querySelectorAll('button')
  for (const b of buttons) b.disabled = true
  status.textContent = action === 'approve' ? 'Approving…' : 'Rejecting…'
  status.className = 'status'
  try {
    const note = card.querySelector('input[name="note"]').value.trim()
    const response = await call(encodeURIComponent(item.id) + '/' + action, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(note === '' ? {} : { note }),
    })
    if (response.status === 401) { showSignIn('Your session ended: sign in again.'); return }
    if (!response.ok) throw new Error(await detailOf(response))
    const body = await response.json()
    card.dataset.settled = 'true'
    status.textContent = body.status === 'approved' ? 'Approved: the requester\'s call may now run, once.' : 'Rejected.'
    status.className = 'status ' + body.status
    announce(item.tool + ' ' + body.status + '.')
    setTimeout(() => { card.remove(); cards.delete(item.id); $('empty').hidden = cards.size !== 0 }, 8000)
    etag = null
    void poll()
  } catch (error) {
    status.textContent = 'Not decided: ' + error.message
    status.className = 'status error'
    for (const b of buttons) b.disabled = false
  }
}

function focusLinked () {
  const id = location.hash.slice(1)
  const card = id && cards.get(id)
  if (card) { card.scrollIntoView(); card.focus() }
}

$('key-form').addEventListener('submit', event => {
  event.preventDefault()
  const key = keyInput().value.trim()
  if (key === '') return
  sessionStorage.setItem(KEY, key)
  $('signin-error').textContent = ''
  void poll()
})
$('signout').addEventListener('click', async () => {
  const cookie = viaCookie
  sessionStorage.removeItem(KEY)
  if (cookie) await call('ui/logout', { method: 'POST' }).catch(() => {})
  showSignIn('')
  $('signin-error').textContent = 'You are signed out.'
  announce('You are signed out.')
  $('key').focus()
})
document.addEventListener('visibilitychange', () => { if (!document.hidden && signedIn) void poll() })
setInterval(refreshTimes, 15000)
if (new URLSearchParams(location.search).get('signin') === 'failed') {
  history.replaceState(null, '', location.pathname + location.hash)
  showSignIn('Signing in with your organisation failed. Try again, or use an API key.')
} else {
  void poll()
}
})()
