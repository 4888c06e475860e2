import type { Redis } from 'ioredis'
import type { Decision, EntryState, LimitEntry, LimitStore } from '../../core/limits/store.js'
import { LIMIT_SCRIPT } from './limit-script.js'

/** The script's answer to a decision (see `limit-script.ts`). */
type Reply = [kind: Decision['type'], indexes: number[], states: Array<number | string>]
type LimitCommand = (numberOfKeys: number, ...args: string[]) => Promise<Reply | []>

// One name per client: the script is the same for every prefix, its keys say where it works.
const COMMAND = 'toolgateLimit'
const STATE_FIELDS = 4

/**
 * The limits' counts in Redis, shared by every replica: a decision (or a refund) is one run of
 * `LIMIT_SCRIPT`, which reads, decides and charges atomically, so the counts hold across
 * replicas exactly as they do in one process (`MemoryLimitStore`). A Redis failure rejects;
 * the caller answers 503 rather than letting a call through uncounted.
 */
export class RedisLimitStore implements LimitStore {
  readonly #run: LimitCommand
  readonly #prefix: string

  constructor (client: Redis, prefix: string) {
    // defineCommand runs EVALSHA and falls back to EVAL once when Redis lost the script.
    client.defineCommand(COMMAND, { lua: LIMIT_SCRIPT })
    this.#run = (client as unknown as Record<string, LimitCommand>)[COMMAND]!.bind(client)
    this.#prefix = prefix
  }

  async decide (entries: readonly LimitEntry[], now: number, take: boolean): Promise<Decision> {
    const [type, indexes, flat] = await this.#call('decide', entries, now, take) as Reply
    if (type === 'crowded') return { type, index: indexes[0]! }
    const states: EntryState[] = []
    for (let i = 0; i < flat.length; i += STATE_FIELDS) {
      const retry = Number(flat[i + 3])
      states.push({ allowed: flat[i] === 1, remaining: Number(flat[i + 1]), resetMs: Number(flat[i + 2]), retryAfterMs: retry === -1 ? Infinity : retry })
    }
    if (type === 'refused') return { type, index: indexes[0]!, states }
    if (type === 'ask') return { type, indexes, states }
    return { type, states }
  }

  async refund (entries: readonly LimitEntry[], now: number): Promise<void> {
    await this.#call('refund', entries, now, false)
  }

  #call (operation: 'decide' | 'refund', entries: readonly LimitEntry[], now: number, take: boolean): Promise<Reply | []> {
    const keys = entries.map(entry => this.#prefix + entry.key)
    const args = [operation, String(now), take ? '1' : '0']
    for (const entry of entries) {
      const { group } = entry
      if (group !== undefined) keys.push(this.#prefix + group.key)
      args.push(entry.type, String(entry.cost), String(entry.max), String(entry.endsAt), String(entry.intervalMs), String(entry.toleranceMs),
        entry.asks ? '1' : '0', entry.force ? '1' : '0', group === undefined ? '' : String(group.max), group?.member ?? '')
    }
    return this.#run(keys.length, ...keys, ...args)
  }
}
