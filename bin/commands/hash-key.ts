import { randomBytes } from 'node:crypto'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { EXIT, UsageError, type Command } from '../command.js'

export const hashKey: Command = {
  help: `usage: printf %s "$KEY" | toolgate hash-key     (preferred: keeps the key out of ps and history)
       toolgate hash-key KEY
       toolgate hash-key --generate

Print the SHA-256 hex digest of an API key; API_KEYS stores digests, never keys.

      --generate   make a new random key (32 bytes, base64url) and print it with its digest`,
  options: { generate: { type: 'boolean' } },
  async run (args) {
    if (args.positionals.length > 1) throw new UsageError('expected at most one KEY')
    if (args.values.generate === true) {
      if (args.positionals.length > 0) throw new UsageError('--generate takes no KEY')
      const key = randomBytes(32).toString('base64url')
      process.stdout.write(`key:    ${key}\nsha256: ${hashApiKey(key)}\n`)
      return EXIT.ok
    }
    const key = args.positionals[0] ?? (process.stdin.isTTY ? '' : await readStdin())
    if (key === '') throw new UsageError('no key: pass KEY, pipe it on standard input, or use --generate')
    process.stdout.write(`${hashApiKey(key)}\n`)
    return EXIT.ok
  },
}

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}
