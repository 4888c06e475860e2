import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { SLOW } from '../slow.js'
import { IN_CI } from '../ci.js'

/** Debian's chromium (`.ci/run` installs it); CI must not quietly skip the browser tests without it. */
const CHROMIUM = '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) {
  if (IN_CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`)
  console.warn(`[skip] browser tests: no ${CHROMIUM} (apt-get install chromium)`)
}

/** Headless, with no background networking (this machine reaches no outside host). */
export async function launchChromium (): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

export interface BrowserGateway {
  readonly app: FastifyInstance
  /** The listening gateway's origin, e.g. `http://127.0.0.1:41234`. */
  readonly base: string
  readonly browser: Browser
}

/**
 * A gateway listening on loopback and a browser, for one test file: built before its tests,
 * closed after them; nothing is started without chromium (the tests skip, or fail in CI).
 */
export function browserGateway (build: () => Promise<FastifyInstance>): BrowserGateway {
  let app: FastifyInstance | undefined
  let browser: Browser | undefined
  let base = ''
  beforeAll(async () => {
    if (!HAVE_CHROMIUM) return
    app = await build()
    await app.listen({ host: '127.0.0.1', port: 0 })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    browser = await launchChromium()
  }, SLOW.BROWSER_MS)
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })
  return {
    get app () { return app! },
    get base () { return base },
    get browser () { return browser! },
  }
}
