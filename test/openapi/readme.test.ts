import { expect, it } from 'vitest'
import { renderReadme } from '../../scripts/readme.js'

it('the README\'s error and tool tables are generated from the code (run `npm run readme`)', async () => {
  const { current, rendered } = await renderReadme()
  expect(current).toBe(rendered)
})
