import { expect, it } from 'vitest'
import { renderDocs } from '../../scripts/readme.js'

it('the generated settings, error, tool and benchmark tables in README.md and docs/ are generated from the code and the latest run (run `npm run readme`)', async () => {
  const pages = await renderDocs()
  expect(pages.map(page => page.path)).toContain('README.md')
  for (const { path, current, rendered } of pages) expect(current, path).toBe(rendered)
})
