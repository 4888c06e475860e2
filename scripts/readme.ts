/**
 * Fill the generated sections of README.md (the settings, the error table, the shipped tools,
 * the latest benchmark run) from the code and from `bench/results/latest.json`.
 * `--check` fails when the README is out of date; a test runs the same comparison.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { render, type Report } from '../bench/lib/report.js'
import { ERROR_TABLE_MARKDOWN } from '../plugins/openapi/error-table.js'
import { loadToolsFromDir } from '../src/services/loading/loader.js'
import { settingsTable } from '../src/services/settings-table.js'
import { summaryOf } from '../src/services/tool-listing.js'

const readmePath = fileURLToPath(new URL('../README.md', import.meta.url))
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

function fill (text: string, name: string, content: string): string {
  const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`)
  return text.replace(pattern, `$1${content}\n$2`)
}

/** The tables `npm run bench` printed for its latest full run, as it saved them. */
async function benchTables (): Promise<string> {
  const report = JSON.parse(await readFile(benchPath, 'utf8')) as Report
  return render(report).trimEnd()
}

export async function renderReadme (): Promise<{ current: string, rendered: string }> {
  const current = await readFile(readmePath, 'utf8')
  const rendered = fill(fill(fill(fill(current, 'settings', settingsTable()), 'errors', ERROR_TABLE_MARKDOWN), 'tools', await toolsTable()), 'bench', await benchTables())
  return { current, rendered }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { current, rendered } = await renderReadme()
  if (process.argv.includes('--check')) {
    if (current !== rendered) {
      console.error('README.md is out of date: run `npm run readme`')
      process.exit(1)
    }
  } else {
    await writeFile(readmePath, rendered)
  }
}
