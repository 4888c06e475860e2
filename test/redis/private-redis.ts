import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { freePort } from '../../scripts/lib/free-port.js'
import { IN_CI } from '../ci.js'

/** Whether a `redis-server` binary is on PATH; these tests skip (and say so) without one. */
export const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version']).error === undefined
if (!HAVE_REDIS_SERVER && IN_CI) {
  throw new Error('CI: no redis-server on PATH; the Redis outage tests must run')
}
if (!HAVE_REDIS_SERVER) console.warn('[skip] Redis outage tests: no redis-server on PATH (install Redis to run them)')

/**
 * A throwaway `redis-server` of the test's own on 127.0.0.1, which the test may stop (kill by
 * PID) and start again on the same port. Nothing is persisted.
 */
export class PrivateRedis {
  #child: ChildProcess | undefined

  private constructor (readonly port: number) {}

  /** A free port for it, not started yet: a Redis that is down from the beginning. */
  static async reserve (): Promise<PrivateRedis> {
    return new PrivateRedis(await freePort())
  }

  /** Started on a free port; on another if something else took that port first (another test run on this machine). */
  static async start (): Promise<PrivateRedis> {
    for (let attempt = 1; ; attempt++) {
      const redis = await PrivateRedis.reserve()
      try {
        await redis.start()
        return redis
      } catch (error) {
        if (attempt === 3 || !/Address already in use/i.test(String(error))) throw error
      }
    }
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Start (again) on the same port; resolves once it accepts connections. */
  async start (): Promise<void> {
    if (this.#child !== undefined) throw new Error('this redis-server is already running')
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.#child = child
    let out = ''
    await new Promise<void>((resolve, reject) => {
      // Milliseconds on an idle machine; the bound is for a busy one.
      const timer = setTimeout(() => { reject(new Error(`redis-server did not start on ${this.port}: ${out}`)) }, 15_000)
      child.stdout!.on('data', chunk => {
        out += String(chunk)
        if (out.includes('Ready to accept connections')) { clearTimeout(timer); resolve() }
      })
      child.once('exit', code => { clearTimeout(timer); reject(new Error(`redis-server exited ${code}: ${out}`)) })
    })
  }

  /** Freeze it (SIGSTOP): connections stay open and nothing answers, like a Redis stuck in a long pause. */
  pause (): void {
    process.kill(this.#child!.pid!, 'SIGSTOP')
  }

  resume (): void {
    process.kill(this.#child!.pid!, 'SIGCONT')
  }

  /** Kill it by its PID (SIGKILL: an outage, not a shutdown) and wait until it is gone. */
  async stop (): Promise<void> {
    const child = this.#child
    if (child === undefined) return
    this.#child = undefined
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    process.kill(child.pid!, 'SIGKILL')
    await exited
  }
}

