import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { ToolError, type ToolErrorDeclaration } from 'toolgate'
import { DEMO_ACCOUNTS, type AccountBalance, type LedgerStore, type TransferProposal, type TransferReceipt, type TransferRequest } from './store.js'

/**
 * Check both accounts and the funds, then debit and credit, in one script: Redis runs it
 * atomically, so replicas sharing the ledger can never overdraw an account between them.
 * Returns {code} on refusal, or the two balances after.
 */
const TRANSFER = `
local from = redis.call('HGET', KEYS[1], ARGV[1])
local to = redis.call('HGET', KEYS[1], ARGV[2])
if not from then return {'ACCOUNT_NOT_FOUND', ARGV[1]} end
if not to then return {'ACCOUNT_NOT_FOUND', ARGV[2]} end
local amount = tonumber(ARGV[3])
if tonumber(from) < amount then return {'INSUFFICIENT_FUNDS', from} end
return {'OK', redis.call('HINCRBY', KEYS[1], ARGV[1], -amount), redis.call('HINCRBY', KEYS[1], ARGV[2], amount)}`

/**
 * The demo ledger in a Redis hash, shared by every gateway replica. `preview` (the dry run)
 * answers from the balances this replica saw last: advisory, as the interface says.
 */
export class RedisLedgerStore implements LedgerStore {
  readonly currency: string
  readonly errors: readonly ToolErrorDeclaration[] = [
    { status: 503, code: 'LEDGER_UNAVAILABLE', description: 'The ledger\'s Redis cannot be reached; retry with the same idempotency key.' },
  ]
  readonly #redis: Redis
  readonly #key: string
  readonly #seen = new Map<string, number>(Object.entries(DEMO_ACCOUNTS))
  #seeded = false

  constructor (redis: Redis, prefix: string, currency = 'USD') {
    this.#redis = redis
    this.#key = `${prefix}ledger:balances`
    this.currency = currency
  }

  /** Create the demo accounts that do not exist yet (HSETNX: replicas starting together agree). */
  async seed (accounts: Readonly<Record<string, number>> = DEMO_ACCOUNTS): Promise<void> {
    for (const [account, balance] of Object.entries(accounts)) await this.#redis.hsetnx(this.#key, account, balance)
    this.#seeded = true
  }

  async balances (accounts?: readonly string[]): Promise<AccountBalance[]> {
    const all = await this.#unavailableAs503(() => this.#redis.hgetall(this.#key))
    const ids = accounts ?? Object.keys(all)
    return ids.map(account => {
      const value = all[account]
      if (value === undefined) throw new ToolError(404, 'ACCOUNT_NOT_FOUND', `there is no account "${account}"`)
      this.#seen.set(account, Number(value))
      return { account, balance: Number(value) }
    }).sort((a, b) => a.account.localeCompare(b.account))
  }

  preview (request: TransferRequest): TransferProposal {
    const { from, to, amount } = request
    const before = { [from]: this.#seenBalance(from), [to]: this.#seenBalance(to) }
    if (before[from]! < amount) throw new ToolError(409, 'INSUFFICIENT_FUNDS', `account "${from}" holds ${before[from]} cents, less than the ${amount} to transfer`)
    return { from, to, amount, balancesBefore: before, balancesAfter: { [from]: before[from]! - amount, [to]: before[to]! + amount } }
  }

  async transfer (request: TransferRequest): Promise<TransferReceipt> {
    const { from, to, amount } = request
    const reply = await this.#unavailableAs503(() => this.#redis.eval(TRANSFER, 1, this.#key, from, to, String(amount))) as [string, ...Array<string | number>]
    if (reply[0] === 'ACCOUNT_NOT_FOUND') throw new ToolError(404, 'ACCOUNT_NOT_FOUND', `there is no account "${String(reply[1])}"`)
    if (reply[0] === 'INSUFFICIENT_FUNDS') throw new ToolError(409, 'INSUFFICIENT_FUNDS', `account "${from}" holds ${String(reply[1])} cents, less than the ${amount} to transfer`)
    const balancesAfter = { [from]: Number(reply[1]), [to]: Number(reply[2]) }
    this.#seen.set(from, balancesAfter[from]!)
    this.#seen.set(to, balancesAfter[to]!)
    return { transferId: randomUUID(), at: new Date().toISOString(), from, to, amount, balancesAfter }
  }

  #seenBalance (account: string): number {
    const balance = this.#seen.get(account)
    if (balance === undefined) throw new ToolError(404, 'ACCOUNT_NOT_FOUND', `there is no account "${account}"`)
    return balance
  }

  /**
   * Redis unreachable: 503. Whether a transfer whose reply was lost took effect is unknown, so
   * the message does not promise either way; the idempotency key is what makes a retry safe.
   */
  async #unavailableAs503<T> (operation: () => Promise<T>): Promise<T> {
    try {
      // Redis may have been down when this replica started: seed on first use instead.
      if (!this.#seeded) await this.seed()
      return await operation()
    } catch (error) {
      if (error instanceof ToolError) throw error
      throw new ToolError(503, 'LEDGER_UNAVAILABLE', 'the ledger store cannot be reached; retry with the same idempotency key')
    }
  }
}
