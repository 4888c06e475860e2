/* global process, fetch, WebSocket, console */
// A manual check that the Swagger UI works in a real browser with per-caller documents (not in
// CI: it needs Chromium). Drives headless Chromium over the DevTools protocol: opens BASE/docs/,
// answers the UI's credential prompt with ANSWER ("-" dismisses it) and prints the prompts seen
// and the operation paths the UI rendered.
//
//   node --experimental-websocket scripts/docs-browser-check.mjs http://127.0.0.1:3000 <api-key>
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const [base, answer] = process.argv.slice(2)
const chrome = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-port=39222', `--user-data-dir=${mkdtempSync(join(tmpdir(), 'toolgate-docs-'))}`, 'about:blank'], { stdio: 'ignore' })
try {
  let targets
  for (let i = 0; i < 50 && targets === undefined; i++) {
    try { targets = await (await fetch('http://127.0.0.1:39222/json')).json() } catch { await sleep(200) }
  }
  const page = targets.find(t => t.type === 'page')
  const ws = new WebSocket(page.webSocketDebuggerUrl)
  await new Promise(resolve => ws.addEventListener('open', resolve))
  let id = 0
  const pending = new Map()
  const prompts = []
  const send = (method, params = {}) => new Promise(resolve => { const n = ++id; pending.set(n, resolve); ws.send(JSON.stringify({ id: n, method, params })) })
  ws.addEventListener('message', event => {
    const message = JSON.parse(event.data)
    if (message.id !== undefined) { pending.get(message.id)?.(message.result); pending.delete(message.id) }
    if (message.method === 'Page.javascriptDialogOpening') {
      prompts.push(message.params.message)
      void send('Page.handleJavaScriptDialog', { accept: answer !== '-', promptText: answer })
    }
  })
  await send('Page.enable')
  await send('Page.navigate', { url: `${base}/docs/` })
  await sleep(8000)
  const result = await send('Runtime.evaluate', { expression: 'JSON.stringify([...new Set([...document.querySelectorAll("[data-path]")].map(e => e.getAttribute("data-path")))])', returnByValue: true })
  console.log(JSON.stringify({ prompts, paths: JSON.parse(result.result.value) }))
  ws.close()
} finally {
  chrome.kill()
}
