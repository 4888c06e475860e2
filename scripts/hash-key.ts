/**
 * Print the SHA-256 digest of an API key, the form `API_KEYS` stores:
 *   printf %s "$KEY" | npx tsx scripts/hash-key.ts     (preferred: keeps the key out of `ps` and history)
 *   npx tsx scripts/hash-key.ts "$KEY"
 *   npx tsx scripts/hash-key.ts --generate             (a new random key, then its digest)
 */
import { randomBytes } from 'node:crypto'
import { hashApiKey } from '../src/services/auth/api-keys.js'

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

const argument = process.argv[2]
if (argument === '--generate') {
  const key = randomBytes(32).toString('base64url')
  process.stdout.write(`key:    ${key}\nsha256: ${hashApiKey(key)}\n`)
} else {
  const key = argument ?? (process.stdin.isTTY ? '' : await readStdin())
  if (key === '') {
    process.stderr.write('usage: printf %s "$KEY" | tsx scripts/hash-key.ts  |  tsx scripts/hash-key.ts <key>  |  tsx scripts/hash-key.ts --generate\n')
    process.exitCode = 2
  } else {
    process.stdout.write(`${hashApiKey(key)}\n`)
  }
}
