/**
 * Fill the generated sections of README.md and docs/*.md (the settings, the error table, the
 * shipped tools, the latest benchmark run) from the code and from `bench/results/latest.json`.
 * A section is marked `<!-- NAME:start -->` ... `<!-- NAME:end -->` in whichever page holds it;
 * each section must be marked in exactly one page. `--check` fails when a page is out of date;
 * a test runs the same comparison.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { render, type Report } from '../bench/lib/report.js'
import { ERROR_TABLE_MARKDOWN } from '../plugins/openapi/error-table.js'
import { loadToolsFromDir } from '../src/services/loading/loader.js'
import { summaryOf } from '../src/services/tool-listing.js'
import { documentPaths, ROOT } from './lib/pages.js'
import { settingsTable } from './lib/settings-table.js'

const toolsDir = fileURLToPath(new URL('../tools', import.meta.url))
const benchPath = fileURLToPath(new URL('../bench/results/latest.json', import.meta.url))

async function toolsTable (): Promise<string> {
  const tools = await loadToolsFromDir(toolsDir)
  return [
    '| tool | kind | effects | read-only | what it does |',
    '|---|---|---|---|---|',
    ...tools.map(t => `| \`${t.id}\` | ${t.kind} | ${t.effects.length === 0 ? 'none declared' : t.effects.join(', ')} | ${t.isReadOnly ? 'yes' : 'no'} | ${summaryOf(t).replaceAll('|', '\\|')} |`),
  ].join('\n')
}

/** The tables `npm run bench` printed for its latest full run, as it saved them. */
async function benchTables (): Promise<string> {
  const report = JSON.parse(await readFile(benchPath, 'utf8')) as Report
  return render(report).trimEnd()
}

const markerOf = (name: string): RegExp => new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`)

export interface RenderedPage { readonly path: string, readonly current: string, readonly rendered: string }

/** Every page as it is and as it should be; throws when a section is marked in no page or in several. */
export async function renderDocs (): Promise<RenderedPage[]> {
  const sections: Record<string, string> = {
    settings: settingsTable(),
    errors: ERROR_TABLE_MARKDOWN,
    tools: await toolsTable(),
    bench: await benchTables(),
  }
  const pages: RenderedPage[] = []
  const holders = new Map<string, string[]>(Object.keys(sections).map(name => [name, []]))
  for (const path of documentPaths()) {
    const current = await readFile(`${ROOT}${path}`, 'utf8')
    let rendered = current
    for (const [name, content] of Object.entries(sections)) {
      if (!markerOf(name).test(rendered)) continue
      holders.get(name)!.push(path)
      rendered = rendered.replace(markerOf(name), `$1${content}\n$2`)
    }
    pages.push({ path, current, rendered })
  }
  for (const [name, paths] of holders) {
    if (paths.length !== 1) throw new Error(`the generated section "${name}" must be marked in exactly one page, found in ${paths.length === 0 ? 'none' : paths.join(', ')}`)
  }
  return pages
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pages = await renderDocs()
  if (process.argv.includes('--check')) {
    const stale = pages.filter(page => page.current !== page.rendered).map(page => page.path)
    if (stale.length > 0) {
      console.error(`${stale.join(', ')} out of date: run \`npm run readme\``)
      process.exit(1)
    }
  } else {
    for (const page of pages) if (page.current !== page.rendered) await writeFile(`${ROOT}${page.path}`, page.rendered)
  }
}
