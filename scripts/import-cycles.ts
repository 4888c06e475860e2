/**
 * Fails when the package's modules import each other in a circle (type-only imports count: a
 * circle of types is a circle of knowledge). Run by `npm run lint`; prints each circle found.
 *   npx tsx scripts/import-cycles.ts
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))
const ROOMS = ['src', 'plugins', 'bin']

function filesUnder (dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return filesUnder(path)
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : []
  })
}

const files = ROOMS.flatMap(room => filesUnder(join(root, room)))
const known = new Set(files)
const edges = new Map<string, string[]>()
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
  edges.set(file, importedFiles
    .map(imported => imported.fileName)
    .filter(name => name.startsWith('.'))
    .map(name => resolve(dirname(file), name).replace(/\.js$/, '.ts'))
    .filter(target => known.has(target)))
}

// Tarjan's strongly connected components: every component of more than one module is a circle.
const index = new Map<string, number>()
const low = new Map<string, number>()
const stack: string[] = []
const onStack = new Set<string>()
const circles: string[][] = []
let next = 0
function visit (file: string): void {
  index.set(file, next)
  low.set(file, next++)
  stack.push(file)
  onStack.add(file)
  for (const target of edges.get(file) ?? []) {
    if (!index.has(target)) {
      visit(target)
      low.set(file, Math.min(low.get(file)!, low.get(target)!))
    } else if (onStack.has(target)) {
      low.set(file, Math.min(low.get(file)!, index.get(target)!))
    }
  }
  if (low.get(file) === index.get(file)) {
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || (edges.get(file) ?? []).includes(file)) circles.push(component)
  }
}
for (const file of files) if (!index.has(file)) visit(file)

if (circles.length > 0) {
  for (const circle of circles) console.error(`import circle: ${circle.map(file => relative(root, file)).sort().join(' <-> ')}`)
  process.exit(1)
}
console.log(`no import circles among ${files.length} modules of ${ROOMS.join(', ')}`)
