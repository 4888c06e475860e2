import { createRedisClient } from 'toolgate/server'
import { RedisLedgerStore } from './redis-store.js'
import { MemoryLedgerStore, type LedgerStore } from './store.js'

/** Kept on the global object: even a reload that imports this helper afresh finds it. */
const SERVED = Symbol.for('toolgate.tools.ledger.served-store')
const holder = globalThis as { [SERVED]?: Promise<LedgerStore> }

/**
 * The store of the served ledger tools, one per process, so that a reload of the ledger's files
 * keeps the balances and its one Redis connection instead of opening another each time. With
 * REDIS_URL set, the ledger lives in Redis so that every replica moves the same money;
 * otherwise in memory. (The gateway's own Redis settings are validated by its config; this demo
 * tool reads the same two variables.)
 */
export function servedLedgerStore (): Promise<LedgerStore> {
  holder[SERVED] ??= (async () => {
    const url = process.env.REDIS_URL
    if (url === undefined || url === '') return new MemoryLedgerStore()
    const store = new RedisLedgerStore(createRedisClient(url), process.env.REDIS_PREFIX ?? 'toolgate:')
    await store.seed().catch(() => {}) // Redis down at start: the store seeds on first use once it is back
    return store
  })()
  return holder[SERVED]
}
