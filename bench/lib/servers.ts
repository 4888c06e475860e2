/** A target server as a child process: started, checked once by hand, measured, stopped. */
import type { ChildProcess } from 'node:child_process'
import type { Target } from './targets.js'
import { nextMessage, rssMiB, SERVER_CORE, spawnNode, stop } from './processes.js'

export interface RunningServer {
  readonly target: Target
  readonly pid: number
  readonly url: string
  readonly child: ChildProcess
}

export interface MemoryReport {
  readonly rssMiB: number | undefined
  /** V8 heap in use after a full collection (only with --expose-gc). */
  readonly heapUsedMiB: number | undefined
}

export async function startServer (target: Target, nodeFlags: readonly string[] = []): Promise<RunningServer> {
  const child = spawnNode(SERVER_CORE, [...nodeFlags, target.file], { env: { ...target.env }, ipc: true })
  try {
    const port = await nextMessage(child, m => (m as { port?: number } | null)?.port)
    const server = { target, pid: child.pid!, url: `http://127.0.0.1:${port}${target.request.path}`, child }
    await checkAnswer(server)
    return server
  } catch (error) {
    stop(child)
    throw new Error(`target ${target.id} did not start: ${(error as Error).message}`)
  }
}

/** One request by hand: a target that answers wrongly is not measured. */
async function checkAnswer (server: RunningServer): Promise<void> {
  const { request, isRight } = server.target
  const response = await fetch(server.url, { method: 'POST', headers: request.headers, body: request.body })
  const text = await response.text()
  let body: unknown
  try { body = JSON.parse(text) } catch {}
  if (response.status !== 200 || !isRight(body)) throw new Error(`wrong answer: ${response.status} ${text.slice(0, 300)}`)
}

export async function memoryOf (server: RunningServer): Promise<MemoryReport> {
  const rss = rssMiB(server.pid)
  server.child.send('memory')
  const answer = await nextMessage(server.child, m => {
    const reply = m as { memory?: NodeJS.MemoryUsage, collected?: boolean } | null
    return reply?.memory === undefined ? undefined : { memory: reply.memory, collected: reply.collected === true }
  })
  return { rssMiB: rss, heapUsedMiB: answer.collected ? answer.memory.heapUsed / 2 ** 20 : undefined }
}

export function stopServer (server: RunningServer): void {
  stop(server.child)
}
