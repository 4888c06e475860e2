import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { documentPaths, ROOT } from '../../scripts/lib/pages.js'

/** The page without its fenced code blocks, whose text is code, not Markdown. */
function prose (text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '')
}

/** GitHub's anchor of a heading: its text lowercased, punctuation other than `-` and `_` dropped, spaces to `-`. */
function anchorOf (heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/<[^>]+>/g, '') // inline HTML shows nothing of its tags
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-')
}

/** Every anchor a page offers: one per heading, a repeated one suffixed -1, -2, ... as GitHub does. */
function anchorsOf (path: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const match of prose(readFileSync(path, 'utf8')).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = anchorOf(match[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

/** Every Markdown link target of a page, outside code blocks and code spans. */
function linksOf (text: string): string[] {
  const withoutCode = prose(text).replace(/(`+)[\s\S]*?\1/g, '')
  return [...withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(match => match[1]!)
}

const pages = documentPaths()

describe('the links of README.md and docs/*.md', () => {
  it('reads the README and at least the docs index', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/README.md']))
  })

  it.each(pages)('%s: every relative link names a file that exists and, with #anchor, a heading in it', page => {
    const from = join(ROOT, page)
    const broken: string[] = []
    for (const target of linksOf(readFileSync(from, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // another site: the next test's concern
      const [file = '', anchor] = target.split('#') as [string, string | undefined]
      const path = file === '' ? from : join(dirname(from), decodeURIComponent(file))
      if (!existsSync(path)) { broken.push(`${target}: no file ${relative(ROOT, path)}`); continue }
      if (anchor === undefined) continue
      if (!statSync(path).isFile() || !path.endsWith('.md')) { broken.push(`${target}: an anchor into something that is no Markdown page`); continue }
      if (!anchorsOf(path).has(decodeURIComponent(anchor))) broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, path)}`)
    }
    expect(broken).toEqual([])
  })

  it.each(pages)('%s: links nothing outside the repository', page => {
    const outside = linksOf(readFileSync(join(ROOT, page), 'utf8')).filter(target => /^[a-z][a-z0-9+.-]*:/i.test(target))
    expect(outside).toEqual([])
  })

  it('computes anchors as GitHub does', () => {
    expect(anchorOf('MCP over Streamable HTTP: `POST /mcp`')).toBe('mcp-over-streamable-http-post-mcp')
    expect(anchorOf('Upstream HTTP APIs (OpenAPI)')).toBe('upstream-http-apis-openapi')
    expect(anchorOf('The `toolgate` command')).toBe('the-toolgate-command')
    expect(anchorOf('A tool\'s own errors')).toBe('a-tools-own-errors')
    expect(anchorOf('MCP over stdio: `toolgate mcp [TOOLS_DIR]`')).toBe('mcp-over-stdio-toolgate-mcp-tools_dir')
    expect(linksOf('see [a](b.md#c), `[d](e.md)` and\n```\n[f](g.md)\n```\n')).toEqual(['b.md#c'])
  })
})
