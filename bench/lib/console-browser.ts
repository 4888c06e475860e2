/**
 * The operators' console itself, open in headless Chromium (Debian's, driven by playwright-core
 * as test/browser/ does), as the other viewer of bench/console.ts (`--viewer browser`): the
 * page's own requests at the pace a browser reads and draws them. Chromium is started by this
 * process, so it runs where this process is pinned (the load generator's core). The same IPC
 * as bench/lib/console-viewer.ts; the calls the long poll brought are not counted (-1).
 */
import { chromium, type Browser, type Page } from 'playwright-core'
import { tally, type Answered } from './console-page.js'
import type { ViewerClose, ViewerReport } from './console-viewer.js'

interface Open { readonly type: 'open', readonly port: number, readonly key: string }

const READS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\/console\/calls\?/, 'calls'], [/\/console\/series$/, 'series'], [/\/console\/upstreams$/, 'upstreams'],
  [/\/approvals\/ui\/feed$/, 'approvals feed'], [/\/console\/tools$/, 'tools'], [/\/console\/audit\?/, 'audit'],
]

let browser: Browser | undefined
let page: Page | undefined
let answered: Answered[] = []
let firstFailure: string | undefined

async function open (port: number, key: string): Promise<void> {
  browser ??= await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
  const mine = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page = mine
  let firstCalls: () => void = () => {}
  const calls = new Promise<void>(resolve => { firstCalls = resolve })
  mine.on('response', response => {
    if (page !== mine) return
    const url = response.url()
    const read = READS.find(([pattern]) => pattern.test(url))?.[1]
    if (read === undefined) return
    const status = response.status()
    if (status !== 200 && status !== 304) firstFailure ??= `${read}: ${status}`
    answered.push({ at: Date.now(), read, status: status === 200 || status === 304 ? status : -1, bytes: Number(response.headers()['content-length'] ?? 0) })
    if (read === 'calls') firstCalls()
  })
  mine.on('pageerror', error => { firstFailure ??= error.message })
  const response = await mine.goto(`http://127.0.0.1:${port}/console`)
  if (response?.status() !== 200) throw new Error(`GET /console answered ${response?.status()}`)
  await mine.locator('#key').fill(key)
  await mine.keyboard.press('Enter')
  await calls
}

async function close (from: number, to: number): Promise<ViewerReport> {
  const closing = page
  page = undefined
  await closing?.close()
  const { reads } = tally(answered, from, to)
  const report: ViewerReport = { seconds: (to - from) / 1000, reads, callsSeen: -1, ...(firstFailure === undefined ? {} : { firstFailure }) }
  answered = []
  firstFailure = undefined
  return report
}

process.on('message', (message: Open | ViewerClose) => {
  if (message.type === 'open') {
    open(message.port, message.key).then(
      () => { process.send!({ type: 'opened' }) },
      (error: unknown) => { process.send!({ type: 'failed', error: (error as Error).message }) })
  } else {
    close(message.from, message.to).then(report => { process.send!({ type: 'closed', report }) }, (error: unknown) => { process.send!({ type: 'failed', error: (error as Error).message }) })
  }
})
process.on('disconnect', () => { void browser?.close().finally(() => process.exit(0)) })
