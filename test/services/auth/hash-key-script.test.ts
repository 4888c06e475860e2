import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { hashApiKey } from '../../../src/services/auth/index.js'

const run = (args: string[], input?: string): string =>
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/hash-key.ts', ...args], { input, encoding: 'utf8' })

describe('scripts/hash-key.ts', () => {
  it('prints the digest of its argument', () => {
    expect(run(['ops-key'])).toBe(`${hashApiKey('ops-key')}\n`)
  })

  it('prints the digest of stdin without its trailing newline', () => {
    expect(run([], 'ops-key\n')).toBe(`${hashApiKey('ops-key')}\n`)
  })

  it('generates a key together with its digest', () => {
    const [keyLine, digestLine] = run(['--generate']).trim().split('\n')
    const key = keyLine!.replace(/^key:\s+/, '')
    expect(digestLine).toBe(`sha256: ${hashApiKey(key)}`)
  })
})
