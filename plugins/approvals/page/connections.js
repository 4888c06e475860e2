// @ts-check
/*
 * The connections page's script (a page of its own, signed in as on the approvals page: the same
 * API key in this tab's sessionStorage, or the same sign-in cookie). It lists the upstreams a
 * person reaches with their own account, and links (the browser goes to the upstream's
 * authorization server and comes back) or unlinks each. Every value from the gateway enters the
 * DOM as text, never as markup.
 */
(() => {
'use strict'
const KEY = 'toolgate-approvals-key'
const $ = id => document.getElementById(id)
/** @returns {HTMLInputElement} */
const keyInput = () => /** @type {HTMLInputElement} */ ($('key'))

function el (tag, text, className) {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  if (className) node.className = className
  return node
}
function notice (text) {
  $('notice').textContent = text
  $('notice').hidden = text === ''
}
function headers () {
  const key = sessionStorage.getItem(KEY)
  return key === null ? {} : { 'x-api-key': key }
}
async function request (method, path) {
  return await fetch(path, { method, headers: headers(), credentials: 'same-origin', cache: 'no-store' })
}

const STATES = { linked: 'Linked', broken: 'The link broke: link again', unlinked: 'Not linked' }

function render (body) {
  $('signin').hidden = true
  $('board').hidden = false
  $('who').hidden = false
  $('viewer').textContent = body.viewer.id
  const list = $('connections')
  list.replaceChildren()
  $('empty').hidden = body.connections.length > 0
  for (const connection of body.connections) {
    const item = el('li', undefined, `connection ${connection.state}`)
    item.dataset.upstream = connection.upstream
    item.append(el('h3', connection.upstream))
    const state = el('p', STATES[connection.state] ?? connection.state, 'state')
    if (connection.linkedAt) state.append(el('span', ` since ${new Date(connection.linkedAt).toLocaleString()}`, 'muted'))
    item.append(state)
    if (connection.why) item.append(el('p', connection.why, 'muted small'))
    const buttons = el('div', undefined, 'buttons')
    const link = el('button', connection.state === 'linked' ? 'Link again' : 'Link', 'link')
    link.type = 'button'
    link.addEventListener('click', () => { void begin(connection.upstream) })
    buttons.append(link)
    if (connection.state !== 'unlinked') {
      const unlink = el('button', 'Unlink', 'unlink')
      unlink.type = 'button'
      unlink.addEventListener('click', () => { void end(connection.upstream) })
      buttons.append(unlink)
    }
    item.append(buttons)
    list.append(item)
  }
}

async function load () {
  let response
  try {
    response = await request('GET', '../connections')
  } catch {
    notice('The gateway cannot be reached; reload to try again.')
    return
  }
  if (response.status === 401) {
    $('board').hidden = true
    $('who').hidden = true
    $('signin').hidden = false
    return
  }
  if (!response.ok) {
    notice(`The gateway answered ${response.status}: ${(await response.json().catch(() => ({}))).detail ?? ''}`)
    return
  }
  render(await response.json())
}

async function begin (upstream) {
  const response = await request('POST', `../connections/${encodeURIComponent(upstream)}/link`)
  if (!response.ok) {
    notice(`Linking ${upstream} cannot begin: ${(await response.json().catch(() => ({}))).detail ?? response.status}`)
    return
  }
  // To the upstream's authorization server; it sends the browser back here.
  location.assign((await response.json()).url)
}

async function end (upstream) {
  const response = await request('POST', `../connections/${encodeURIComponent(upstream)}/unlink`)
  notice(response.ok ? `${upstream} is unlinked.` : `Unlinking ${upstream} failed (${response.status}).`)
  await load()
}

$('key-form').addEventListener('submit', event => {
  event.preventDefault()
  sessionStorage.setItem(KEY, keyInput().value)
  keyInput().value = ''
  void load()
})
$('signout').addEventListener('click', () => {
  sessionStorage.removeItem(KEY)
  void fetch('../approvals/ui/logout', { method: 'POST', credentials: 'same-origin' }).finally(() => { void load() })
})

const query = new URLSearchParams(location.search)
if (query.get('linked')) notice(`${query.get('linked')} is linked.`)
if (query.get('failed')) notice(`Linking ${query.get('failed')} failed: ${query.get('why') ?? 'unknown reason'}`)
history.replaceState(null, '', location.pathname)
void load()
})()
