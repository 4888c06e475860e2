import type { Redis } from 'ioredis'

/*
 * How many people's links each upstream has, by state, for the `toolgate_upstream_links` gauge.
 * Counted at each change (linked, broken, unlinked), in this process or, with Redis, in one hash
 * every replica changes and reads back every few seconds. A link that expires unused (after 180
 * days) is not counted down.
 */

type CountedState = 'linked' | 'broken'

export interface LinkCounts {
  /** `from` → `to`: undefined for a link made or removed. */
  change (upstream: string, from: CountedState | undefined, to: CountedState | undefined): void
  get (upstream: string, state: CountedState): number
  close (): void
}

const field = (upstream: string, state: CountedState): string => `${upstream}\n${state}`

/** `updated` hears that the counts may have changed (the gauge reads them again). */
export function memoryLinkCounts (updated: () => void = () => undefined): LinkCounts {
  const counts = new Map<string, number>()
  const add = (key: string, by: number): void => { counts.set(key, Math.max(0, (counts.get(key) ?? 0) + by)) }
  return {
    change: (upstream, from, to) => {
      if (from === to) return
      if (from !== undefined) add(field(upstream, from), -1)
      if (to !== undefined) add(field(upstream, to), 1)
      updated()
    },
    get: (upstream, state) => counts.get(field(upstream, state)) ?? 0,
    close: () => undefined,
  }
}

export function redisLinkCounts (redis: Redis, key: string, updated: () => void, refreshMs = 10_000): LinkCounts {
  const local = memoryLinkCounts()
  let seen = new Map<string, number>()
  const refresh = (): void => {
    redis.hgetall(key).then(all => {
      seen = new Map(Object.entries(all).map(([name, value]) => [name, Math.max(0, Number(value))]))
      updated()
    }, () => undefined)
  }
  const timer = setInterval(refresh, refreshMs)
  timer.unref()
  refresh()
  return {
    change: (upstream, from, to) => {
      if (from === to) return
      local.change(upstream, from, to)
      const pipeline = redis.multi()
      if (from !== undefined) pipeline.hincrby(key, field(upstream, from), -1)
      if (to !== undefined) pipeline.hincrby(key, field(upstream, to), 1)
      pipeline.exec().then(refresh, () => undefined)
    },
    get: (upstream, state) => seen.get(field(upstream, state)) ?? local.get(upstream, state),
    close: () => { clearInterval(timer) },
  }
}
