import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** Debian's chromium (`.ci/run` installs it); CI must not quietly skip the browser tests without it. */
const CHROMIUM = '/usr/bin/chromium'
export const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`)
  console.warn(`[skip] browser tests: no ${CHROMIUM} (apt-get install chromium)`)
}

/** Headless, with no background networking (this machine reaches no outside host). */
export async function launchChromium (): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}
