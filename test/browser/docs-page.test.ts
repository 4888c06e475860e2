import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { browserGateway, HAVE_CHROMIUM } from './chromium.js'
import { upstreamsFile } from '../upstreams/helpers.js'

/*
 * The docs page in a real browser: the Swagger UI fetches the per-caller document, asks for a
 * credential when it is refused, renders only the tools that caller may call, and "Try it out"
 * sends the credential with the call.
 */

const KEYS = { admin: 'admin-key-0123456789', clock: 'clock-key-0123456789' }
const gateway = browserGateway(async () => {
  const config = loadConfig({}, {
    apiKeys: [
      { principal: 'admin', sha256: hashApiKey(KEYS.admin), scopes: ['tools:read', 'tools:call'] },
      { principal: 'clock', sha256: hashApiKey(KEYS.clock), scopes: ['tools:read', 'tools:call'] },
    ],
    rules: [{ principal: 'clock', allow: ['time_*'], deny: [] }, { principal: 'admin', allow: ['*'], deny: [] }],
    upstreamsFile: upstreamsFile({ bundles: { clocks: { description: 'Telling the time.', tools: ['time_*'], aliases: { time_now: { name: 'what_time', description: 'Say what time it is somewhere.' } } } } }),
  })
  return await buildApp({ config, tools: await loadToolsFromDir('tools') })
})

/** Open /docs/ answering the credential prompt with `key`; the POST paths the UI rendered. */
async function renderedToolPaths (key: string, docs = '/docs/', tools = '/tools/'): Promise<{ paths: string[], prompts: number, page: Page }> {
  const page = await gateway.browser.newPage()
  let prompts = 0
  page.on('dialog', dialog => { prompts++; void dialog.accept(key) })
  await page.goto(`${gateway.base}${docs}`)
  await page.waitForSelector('.opblock-post', { timeout: 20_000 })
  const paths = await page.$$eval('.opblock-post .opblock-summary-path', nodes => nodes.map(node => node.getAttribute('data-path') ?? node.textContent ?? ''))
  return { paths: paths.filter(path => path.startsWith(tools)).sort(), prompts, page }
}

describe.skipIf(!HAVE_CHROMIUM)('the docs page in headless Chromium', () => {
  it('asks once for a credential and renders only the tools that caller may call', async () => {
    const { paths, prompts, page } = await renderedToolPaths(KEYS.clock)
    expect(prompts).toBe(1)
    expect(paths).toEqual(['/tools/time_now'])
    await page.close()
  }, SLOW.BROWSER_MS)

  it('renders every tool for a caller who may call them all', async () => {
    const { paths, page } = await renderedToolPaths(KEYS.admin)
    expect(paths).toEqual(gateway.app.catalog.ids().map(id => `/tools/${id}`).sort())
    await page.close()
  }, SLOW.BROWSER_MS)

  it('"Try it out" calls the tool with the credential and shows its 200', async () => {
    const { page } = await renderedToolPaths(KEYS.clock)
    const operation = page.locator('.opblock-post').filter({ hasText: '/tools/time_now' })
    await operation.locator('.opblock-summary-control').click()
    // The UI opens operations with "Try it out" already on (tryItOutEnabled): Execute is there.
    await operation.locator('.execute').click({ timeout: 10_000 })
    const status = operation.locator('.live-responses-table tbody .response-col_status').first()
    await status.waitFor({ timeout: 20_000 })
    expect((await status.textContent())?.trim()).toBe('200')
    const body = await operation.locator('.live-responses-table tbody .response-col_description pre').first().textContent()
    expect(JSON.parse(body ?? '{}')).toMatchObject({ timeZone: 'UTC' })
    await page.close()
  }, SLOW.BROWSER_MS)

  it('a bundle\'s docs page renders its tools at its paths, under its names, and "Try it out" calls through it', async () => {
    const { paths, page } = await renderedToolPaths(KEYS.admin, '/bundles/clocks/docs/', '/bundles/')
    expect(paths).toEqual(['/bundles/clocks/tools/what_time'])
    const operation = page.locator('.opblock-post').filter({ hasText: '/bundles/clocks/tools/what_time' })
    expect(await operation.locator('.opblock-summary-description').textContent()).toBe('Say what time it is somewhere.')
    await operation.locator('.opblock-summary-control').click()
    await operation.locator('.execute').click({ timeout: 10_000 })
    const status = operation.locator('.live-responses-table tbody .response-col_status').first()
    await status.waitFor({ timeout: 20_000 })
    expect((await status.textContent())?.trim()).toBe('200')
    await page.close()
  }, SLOW.BROWSER_MS)
})
