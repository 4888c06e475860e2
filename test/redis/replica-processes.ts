import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const sha = (key: string): string => createHash('sha256').update(key).digest('hex')
const API_KEY = 'replica-key-0123456789'

export interface ReplicaProcess {
  readonly child: ChildProcess
  readonly address: string
}

/** A real `toolgate serve` of the replica-tools fixture; resolves with its address once it listens. */
export function startReplicaProcess (env: Record<string, string>): Promise<ReplicaProcess> {
  // node itself (not a wrapper), so that a signal reaches the server.
  const child = spawn(process.execPath, ['dist/bin/toolgate.js', 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', TOOLS_DIR: 'test/fixtures/replica-tools', API_KEYS: `tester:${sha(API_KEY)}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    let out = ''
    const read = (chunk: Buffer): void => {
      out += String(chunk)
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out)
      if (match !== null) resolve({ child, address: match[1]! })
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.on('exit', code => { reject(new Error(`replica exited ${code}: ${out}`)) })
  })
}

export async function stopReplicaProcess ({ child }: ReplicaProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  await new Promise(resolve => { child.once('exit', resolve); child.kill('SIGTERM') })
}

export async function post (base: string, tool: string, ms: number, session = 'one-session'): Promise<{ status: number, body: { start: number, end: number, token: number | null, pid: number, code?: string } }> {
  const response = await fetch(`${base}/tools/${tool}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'x-session-id': session }, body: JSON.stringify({ ms }),
  })
  return { status: response.status, body: await response.json() as never }
}
