import { readFileSync } from 'node:fs'

/**
 * The package's own version. This file runs from `src/services/` in the clone and from
 * `dist/src/services/` in the package, so it walks up to the nearest `package.json` named
 * toolgate rather than trusting one relative path.
 */
function readVersion (): string {
  for (let url = new URL('./package.json', import.meta.url); ; url = new URL('../package.json', url)) {
    try {
      const manifest = JSON.parse(readFileSync(url, 'utf8')) as { name?: string, version?: string }
      if (manifest.name === 'toolgate' && typeof manifest.version === 'string') return manifest.version
    } catch { /* not here: one folder up */ }
    if (url.pathname === '/package.json') return '0.0.0'
  }
}

export const VERSION: string = readVersion()
