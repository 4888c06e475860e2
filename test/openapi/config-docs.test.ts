import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { ENV_KEYS } from '../../src/services/config.js'

it('every environment variable the configuration reads is documented in docs/configuration.md', async () => {
  const page = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
  for (const name of [...Object.keys(ENV_KEYS), 'API_KEYS', 'JWT_ISSUER', 'JWT_AUDIENCE', 'JWT_ALGORITHMS', 'JWT_JWKS_URL', 'JWT_KEY', 'JWT_SCOPE_CLAIM', 'JWT_PRINCIPAL_PREFIX', 'CONFIG_FILE']) {
    expect(page, name).toContain(`\`${name}\``)
  }
})
