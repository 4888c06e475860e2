// Escaped so they match themselves; `-` is not among them because the `u` flag forbids `\-` here.
const SYNTAX = /[\\^$.*+?()[\]{}|/]/

/**
 * Compile a tool-id glob to an anchored RegExp: `*` matches any run of characters (none
 * included), `?` exactly one character (one code point), everything else itself. Runs of `*`
 * collapse to one, so no glob backtracks worse than one `*` per literal segment.
 *
 * @example
 * compileGlob('notes_*').test('notes_read') // true
 * compileGlob('notes_?').test('notes_ab')   // false
 */
export function compileGlob (glob: string): RegExp {
  let source = ''
  for (const char of glob) {
    if (char === '*') source += source.endsWith('[^]*') ? '' : '[^]*'
    else if (char === '?') source += '[^]'
    else source += SYNTAX.test(char) ? `\\${char}` : char
  }
  return new RegExp(`^${source}$`, 'u')
}
