import { randomUUID } from 'node:crypto'
import { ToolError, type ToolErrorDeclaration } from 'toolgate'

/** Amounts are integer minor units (cents) throughout: no floating point money. */
export interface AccountBalance {
  readonly account: string
  readonly balance: number
}

export interface TransferRequest {
  readonly from: string
  readonly to: string
  readonly amount: number
}

/** What a transfer would do: the dry-run proposal. */
export interface TransferProposal extends TransferRequest {
  readonly balancesBefore: Readonly<Record<string, number>>
  readonly balancesAfter: Readonly<Record<string, number>>
}

/** What a transfer did. */
export interface TransferReceipt extends TransferRequest {
  readonly transferId: string
  readonly at: string
  readonly balancesAfter: Readonly<Record<string, number>>
}

/**
 * Where ledger state lives. The in-memory store below is the default; a later backend (Redis)
 * implements the same interface.
 *
 * `transfer` must be atomic: check both accounts and the funds, debit and credit, all or
 * nothing, even when calls from different sessions overlap. It fails with `ToolError`s:
 * 404 `ACCOUNT_NOT_FOUND`, 409 `INSUFFICIENT_FUNDS`.
 *
 * `preview` is synchronous because a tool's `resolve` (the dry run) is synchronous by
 * contract; a remote backend answers it from a local view and it is advisory only.
 */
export interface LedgerStore {
  readonly currency: string
  /** The store's own failures beyond the ledger's rules (a remote store that cannot be reached), declared by both tools. */
  readonly errors: readonly ToolErrorDeclaration[]
  /** Every account, or the named ones (404 when one is unknown), sorted by account id. */
  balances (accounts?: readonly string[]): Promise<AccountBalance[]>
  transfer (request: TransferRequest): Promise<TransferReceipt>
  preview (request: TransferRequest): TransferProposal
}

/** The demo accounts the shipped ledger starts with (cents). */
export const DEMO_ACCOUNTS: Readonly<Record<string, number>> = { alice: 10_000, bob: 5_000, carol: 0 }

/** The ledger's rules as the tools declare them (`errors`); the schema already refuses bad amounts and `from` = `to`. */
export const LEDGER_ERRORS = {
  accountNotFound: { status: 404, code: 'ACCOUNT_NOT_FOUND', description: 'No account has this id; `ledger_balance` lists the accounts.' },
  insufficientFunds: { status: 409, code: 'INSUFFICIENT_FUNDS', description: 'The account to debit holds less than the amount; nothing moved.' },
} as const

export class MemoryLedgerStore implements LedgerStore {
  readonly currency: string
  readonly errors: readonly ToolErrorDeclaration[] = []
  readonly #balances: Map<string, number>

  constructor (seed: Readonly<Record<string, number>> = DEMO_ACCOUNTS, currency = 'USD') {
    for (const [account, balance] of Object.entries(seed)) {
      if (!Number.isSafeInteger(balance) || balance < 0) throw new RangeError(`seed balance of "${account}" must be a non-negative safe integer`)
    }
    this.#balances = new Map(Object.entries(seed))
    this.currency = currency
  }

  async balances (accounts?: readonly string[]): Promise<AccountBalance[]> {
    const ids = accounts ?? [...this.#balances.keys()]
    return ids.map(account => ({ account, balance: this.#balanceOf(account) })).sort((a, b) => a.account.localeCompare(b.account))
  }

  preview (request: TransferRequest): TransferProposal {
    const { from, to, amount } = request
    const before = { [from]: this.#balanceOf(from), [to]: this.#balanceOf(to) }
    if (from === to) throw new ToolError(422, 'SAME_ACCOUNT', 'a transfer needs two different accounts')
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new ToolError(422, 'INVALID_AMOUNT', 'the amount must be a positive whole number of cents')
    if (before[from]! < amount) {
      throw new ToolError(409, 'INSUFFICIENT_FUNDS', `account "${from}" holds ${before[from]} cents, less than the ${amount} to transfer`)
    }
    return { from, to, amount, balancesBefore: before, balancesAfter: { [from]: before[from]! - amount, [to]: before[to]! + amount } }
  }

  // Synchronous from check to write: nothing can interleave, so the transfer is atomic.
  async transfer (request: TransferRequest): Promise<TransferReceipt> {
    const proposal = this.preview(request)
    for (const [account, balance] of Object.entries(proposal.balancesAfter)) this.#balances.set(account, balance)
    const { from, to, amount, balancesAfter } = proposal
    return { transferId: randomUUID(), at: new Date().toISOString(), from, to, amount, balancesAfter }
  }

  #balanceOf (account: string): number {
    const balance = this.#balances.get(account)
    if (balance === undefined) throw new ToolError(404, 'ACCOUNT_NOT_FOUND', `there is no account "${account}"`)
    return balance
  }
}
