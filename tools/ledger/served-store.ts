import { createRedisClient } from 'toolgate/server'
import { RedisLedgerStore } from './redis-store.js'
import { MemoryLedgerStore, type LedgerStore } from './store.js'

let served: Promise<LedgerStore> | undefined

/**
 * The store of the served ledger tools, one per process: it lives here, in a helper, so that a
 * reload of `ledger.ts` keeps the balances (and its one Redis connection) instead of making a
 * new store. With REDIS_URL set, the ledger lives in Redis so that every replica moves the same
 * money; otherwise in memory. (The gateway's own Redis settings are validated by its config;
 * this demo tool reads the same two variables.)
 */
export function servedLedgerStore (): Promise<LedgerStore> {
  served ??= (async () => {
    const url = process.env.REDIS_URL
    if (url === undefined || url === '') return new MemoryLedgerStore()
    const store = new RedisLedgerStore(createRedisClient(url), process.env.REDIS_PREFIX ?? 'toolgate:')
    await store.seed().catch(() => {}) // Redis down at start: the store seeds on first use once it is back
    return store
  })()
  return served
}
