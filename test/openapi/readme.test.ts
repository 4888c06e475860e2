import { expect, it } from 'vitest'
import { renderReadme } from '../../scripts/readme.js'

it('the README\'s error, tool and benchmark tables are generated from the code and the latest run (run `npm run readme`)', async () => {
  const { current, rendered } = await renderReadme()
  expect(current).toBe(rendered)
})
