import type { Redis } from 'ioredis'
import { reserveOf } from '../../core/idempotency/shares.js'
import type { ApprovalLimits, ApprovalRecord, ApprovalRequest, ApprovalStatus, ApprovalStore, ConsumeResult, ContinuationResult, CreateResult, DecideResult, Decision } from '../../core/approvals/store.js'

/*
 * Approvals in Redis, shared by every replica. One hash per approval (the request as JSON,
 * written once, and the fields that change), a sorted set of pending ids by expiry over all
 * principals and one per principal. Every change is one Lua script, so it is atomic: two
 * replicas deciding, or consuming, the same approval cannot both succeed. The request JSON is
 * never parsed in Lua (cjson would turn an empty array of the input into an object).
 */

/** The limits by the rule of `pendingRefusal` (core/approvals/store.ts); ARGV[9] is the reserve. */
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
local mine = redis.call('ZCARD', KEYS[3])
local total = redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[1], '+inf')
if total >= tonumber(ARGV[5]) then return 'full' end
if mine >= tonumber(ARGV[4]) then return 'principal_full' end
if mine > 0 and total >= tonumber(ARGV[5]) - tonumber(ARGV[9]) then return 'full' end
redis.call('HSET', KEYS[1], 'req', ARGV[3], 'status', 'pending', 'expiresAt', ARGV[2], 'principal', ARGV[7])
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[6]))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[8])
redis.call('PEXPIREAT', KEYS[3], ARGV[2])
return 'created'`

const DECIDE = `
local st = redis.call('HMGET', KEYS[1], 'status', 'expiresAt', 'principal')
if not st[1] then return 'not_found' end
if st[1] ~= 'pending' or tonumber(st[2]) <= tonumber(ARGV[1]) then return 'not_pending' end
local expiresAt = st[2]
if ARGV[2] == 'approved' then expiresAt = ARGV[5] end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'decidedBy', ARGV[3], 'decidedAt', ARGV[1], 'expiresAt', expiresAt)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'note', string.sub(ARGV[4], 2)) end
redis.call('PEXPIREAT', KEYS[1], math.max(tonumber(expiresAt), tonumber(ARGV[1])) + tonumber(ARGV[6]))
redis.call('ZREM', KEYS[2], ARGV[8])
redis.call('ZREM', ARGV[7] .. st[3], ARGV[8])
return 'decided'`

const CONSUME = `
local st = redis.call('HMGET', KEYS[1], 'status', 'expiresAt')
if not st[1] then return 'not_found' end
if st[1] ~= 'approved' then return 'not_approved' end
if tonumber(st[2]) <= tonumber(ARGV[1]) then return 'expired' end
redis.call('HSET', KEYS[1], 'status', 'consumed', 'consumedAt', ARGV[1])
return 'consumed'`

const CONTINUE = `
local live = redis.call('HMGET', KEYS[1], 'status', 'cont')
if not live[1] then return 'not_found' end
if ARGV[1] ~= '' and live[2] ~= string.sub(ARGV[1], 2) then return 'stale' end
redis.call('HSET', KEYS[1], 'cont', ARGV[2])
return 'replaced'`

const UNCONSUME = `
if redis.call('HGET', KEYS[1], 'status') == 'consumed' then
  redis.call('HSET', KEYS[1], 'status', 'approved')
  redis.call('HDEL', KEYS[1], 'consumedAt')
end
return 0`

/** Pending ids past expiry leave the set; only the replica whose ZREM removed one reports it. */
const SWEEP = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 100)
local swept = {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', KEYS[1], id) == 1 then
    local key = ARGV[2] .. id
    local st = redis.call('HMGET', key, 'status', 'principal')
    if st[1] == 'pending' then
      redis.call('HSET', key, 'status', 'expired')
      redis.call('ZREM', ARGV[3] .. st[2], id)
      table.insert(swept, id)
    end
  end
end
return swept`

export class RedisApprovalStore implements ApprovalStore {
  readonly #redis: Redis
  readonly #record: string
  readonly #pending: string
  readonly #pendingBy: string
  readonly #retainMs: number

  /** `retainMs`: how long a settled approval is kept, so a repeat of its call still finds it. */
  constructor (redis: Redis, prefix: string, retainMs = 24 * 60 * 60 * 1000) {
    this.#redis = redis
    this.#record = `${prefix}appr:rec:`
    this.#pending = `${prefix}appr:pending`
    this.#pendingBy = `${prefix}appr:by:`
    this.#retainMs = retainMs
  }

  async create (request: ApprovalRequest, expiresAt: number, limits: ApprovalLimits): Promise<CreateResult> {
    return await this.#redis.eval(CREATE, 3, this.#record + request.id, this.#pending, this.#pendingBy + request.requestedBy,
      String(request.requestedAt), String(expiresAt), JSON.stringify(request), String(limits.maxPendingPerPrincipal),
      String(limits.maxPendingTotal), String(this.#retainMs), request.requestedBy, request.id, String(reserveOf(limits.maxPendingTotal))) as CreateResult
  }

  async get (id: string): Promise<ApprovalRecord | undefined> {
    return recordOf(await this.#redis.hgetall(this.#record + id))
  }

  async listPending (): Promise<ApprovalRecord[]> {
    const ids = await this.#redis.zrangebyscore(this.#pending, `(${Date.now()}`, '+inf')
    if (ids.length === 0) return []
    const pipeline = this.#redis.pipeline()
    for (const id of ids) pipeline.hgetall(this.#record + id)
    const results = await pipeline.exec() ?? []
    return results.flatMap(([error, fields]) => {
      const record = error === null ? recordOf(fields as Record<string, string>) : undefined
      return record?.status === 'pending' ? [record] : []
    }).sort((a, b) => a.requestedAt - b.requestedAt)
  }

  async decide (id: string, decision: Decision): Promise<DecideResult> {
    const result = await this.#redis.eval(DECIDE, 2, this.#record + id, this.#pending,
      String(decision.decidedAt), decision.status, decision.decidedBy,
      // A leading marker tells "no note" ('') from an empty note ('-').
      decision.note === undefined ? '' : `-${decision.note}`, String(decision.useBy), String(this.#retainMs), this.#pendingBy, id) as string
    if (result === 'not_found') return { type: 'not_found' }
    const record = await this.get(id)
    if (record === undefined) return { type: 'not_found' }
    return result === 'decided' ? { type: 'decided', record } : { type: 'not_pending', record }
  }

  async consume (id: string, now: number): Promise<ConsumeResult> {
    return await this.#redis.eval(CONSUME, 1, this.#record + id, String(now)) as ConsumeResult
  }

  async replaceContinuation (id: string, expected: string | undefined, next: string): Promise<ContinuationResult> {
    // A leading marker tells "any" ('') from an expected value.
    return await this.#redis.eval(CONTINUE, 1, this.#record + id, expected === undefined ? '' : `-${expected}`, next) as ContinuationResult
  }

  async unconsume (id: string): Promise<void> {
    await this.#redis.eval(UNCONSUME, 1, this.#record + id)
  }

  async sweepExpired (now: number): Promise<ApprovalRecord[]> {
    const ids = await this.#redis.eval(SWEEP, 1, this.#pending, String(now), this.#record, this.#pendingBy) as string[]
    const records = await Promise.all(ids.map(async id => await this.get(id)))
    return records.filter((r): r is ApprovalRecord => r !== undefined)
  }

  async pendingCount (): Promise<number> {
    return await this.#redis.zcount(this.#pending, `(${Date.now()}`, '+inf')
  }
}

function recordOf (fields: Record<string, string>): ApprovalRecord | undefined {
  if (fields.req === undefined) return undefined
  const request = JSON.parse(fields.req) as ApprovalRequest
  return {
    ...request,
    status: fields.status as ApprovalStatus,
    expiresAt: Number(fields.expiresAt),
    ...(fields.decidedBy === undefined ? {} : { decidedBy: fields.decidedBy, decidedAt: Number(fields.decidedAt) }),
    ...(fields.note === undefined ? {} : { note: fields.note }),
    ...(fields.consumedAt === undefined ? {} : { consumedAt: Number(fields.consumedAt) }),
    ...(fields.cont === undefined ? {} : { continuation: fields.cont }),
  }
}
