import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { gzipSync } from 'node:zlib'

/*
 * The console's files: its own script and styles (`page/`, linted and type-checked as browser
 * code, copied beside the compiled plugin by the build) and the charting library's, read from
 * its package. Each is served under a name that carries its content's hash, so a browser keeps
 * it for a year and a new version is a new name; gzipped once here, not per request.
 */

interface ConsoleAsset {
  /** `console.3f2a9c1b.js`: the name the shell links. */
  readonly name: string
  readonly type: string
  readonly body: Buffer
  readonly gzipped: Buffer
}

export interface ConsoleAssets {
  readonly script: ConsoleAsset
  readonly style: ConsoleAsset
  readonly chartScript: ConsoleAsset
  readonly chartStyle: ConsoleAsset
  readonly byName: ReadonlyMap<string, ConsoleAsset>
}

const require = createRequire(import.meta.url)

export function readConsoleAssets (): ConsoleAssets {
  const own = (file: string): Buffer => readFileSync(new URL(`./page/${file}`, import.meta.url))
  const script = assetOf('console', 'js', own('console.js'))
  const style = assetOf('console', 'css', own('console.css'))
  const chartScript = assetOf('uplot', 'js', readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')))
  const chartStyle = assetOf('uplot', 'css', readFileSync(require.resolve('uplot/dist/uPlot.min.css')))
  const all = [script, style, chartScript, chartStyle]
  return { script, style, chartScript, chartStyle, byName: new Map(all.map(asset => [asset.name, asset])) }
}

function assetOf (base: string, extension: 'js' | 'css', body: Buffer): ConsoleAsset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10)
  return {
    name: `${base}.${hash}.${extension}`,
    type: extension === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
    body,
    gzipped: gzipSync(body, { level: 9 }),
  }
}
