import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'

// The compiled command, as `npx toolgate` runs it (`npm test` builds first).
const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'dist/bin/toolgate.js')

function toolgate (args: string[], options: { input?: string, env?: Record<string, string> } = {}): { status: number | null, stdout: string, stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: root, input: options.input, encoding: 'utf8', env: { ...process.env, ...options.env }, timeout: 20_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

// Each test runs the command once or a few times: a node start-up each.
describe('toolgate (the command)', { timeout: SLOW.PROCESS_MS }, () => {
  it('prints its version with --version and -v, also after a command', () => {
    const { version } = JSON.parse(String(spawnSync(process.execPath, ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: root, encoding: 'utf8' }).stdout)) as { version: string }
    for (const args of [['--version'], ['-v'], ['list', '--version']]) expect(toolgate(args)).toMatchObject({ status: 0, stdout: `${version}\n` })
  })

  it('prints help listing every command with exit 0, and exit 2 with no command', () => {
    const help = toolgate(['--help'])
    expect(help.status).toBe(0)
    for (const command of ['serve', 'openapi', 'list', 'hash-key', 'mcp']) expect(help.stdout).toContain(`  ${command} `)
    expect(toolgate([]).status).toBe(2)
  })

  it('answers an unknown command or option with exit 2 and a pointer to --help', () => {
    for (const args of [['bogus'], ['list', '--bogus'], ['list', 'a', 'b']]) {
      const result = toolgate(args)
      expect(result.status).toBe(2)
      expect(result.stderr).toMatch(/^toolgate: .+\nRun 'toolgate --help' for usage\.\n$/)
    }
  })

  it('prints a command\'s own help', () => {
    expect(toolgate(['serve', '--help'])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^usage: toolgate serve \[--watch\] \[--upstreams FILE\] \[TOOLS_DIR\]/) })
  })

  it('hash-key prints the digest of its argument, or of stdin without the trailing newline', () => {
    expect(toolgate(['hash-key', 'ops-key']).stdout).toBe(`${hashApiKey('ops-key')}\n`)
    expect(toolgate(['hash-key'], { input: 'ops-key\n' }).stdout).toBe(`${hashApiKey('ops-key')}\n`)
  })

  it('hash-key --generate prints a new key with its digest', () => {
    const [keyLine, digestLine] = toolgate(['hash-key', '--generate']).stdout.trim().split('\n')
    const key = keyLine!.replace(/^key:\s+/, '')
    expect(key).toMatch(/^[\w-]{43}$/)
    expect(digestLine).toBe(`sha256: ${hashApiKey(key)}`)
  })

  it('list prints one row per shipped tool with its effects and flags', () => {
    const { status, stdout } = toolgate(['list', 'tools'])
    expect(status).toBe(0)
    const rows = stdout.trim().split('\n')
    expect(rows[0]).toMatch(/^ID\s+KIND\s+EFFECTS\s+FLAGS\s+TIMEOUT$/)
    expect(rows.find(row => row.startsWith('ledger_transfer '))).toMatch(/write\s+affects-others,financial,irreversible\s+idempotency-key\s+10000ms/)
  })

  it('list --json prints one object per tool', () => {
    const lines = toolgate(['list', 'tools', '--json']).stdout.trim().split('\n').map(line => JSON.parse(line) as { id: string, flags: string[] })
    expect(lines.find(tool => tool.id === 'time_now')?.flags).toEqual(['read-only', 'concurrency-safe'])
  })

  it('openapi prints the same document as the committed one', async () => {
    const { status, stdout } = toolgate(['openapi', 'tools'])
    expect(status).toBe(0)
    const { 'x-generated': _, ...committed } = JSON.parse((await import('node:fs')).readFileSync(join(root, 'openapi/openapi.json'), 'utf8')) as Record<string, unknown>
    expect(JSON.parse(stdout)).toEqual(committed)
  })

  it('names the file and field of a broken tool, with exit 1 and no stack', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'))
    writeFileSync(join(dir, 'bad.js'), 'export default { id: "Bad-Id" }\n')
    const result = toolgate(['list', dir])
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^toolgate: tool "Bad-Id" \(.*bad\.js\): field "id" must match/)
    expect(result.stderr).not.toContain('    at ')
  })

  it('names a missing tools folder with exit 1', () => {
    const result = toolgate(['list', '/nonexistent/tools'])
    expect(result).toMatchObject({ status: 1, stderr: expect.stringContaining('the tools folder cannot be read (ENOENT)') })
  })
})
