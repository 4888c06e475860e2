import { z } from 'zod'
import { defineTool, type AnyTool } from 'toolgate'
import { denyWithoutScope, type GatewayContext } from './lib/context.js'
import { servedLedgerStore } from './ledger/served-store.js'
import { LEDGER_ERRORS, MemoryLedgerStore, type LedgerStore } from './ledger/store.js'

/*
 * A demo ledger of shared accounts (alice, bob, carol). Money is integer cents. A transfer
 * moves other people's money for good: financial, irreversible, affects-others.
 */

/** The schema's hard cap on one transfer (cents). */
export const MAX_TRANSFER_CENTS = 1_000_000
/** Above this (cents), a transfer also needs the scope `ledger:transfer:large`. */
export const LARGE_TRANSFER_CENTS = 50_000
export const TRANSFER_SCOPE = 'ledger:transfer'
export const LARGE_TRANSFER_SCOPE = 'ledger:transfer:large'

export interface LedgerOptions {
  /** Above this (cents) a transfer waits for a person's approval (the gateway's approvals); absent: never. */
  readonly approvalAboveCents?: number
  /** What one principal may transfer a day (cents, UTC days) before each further transfer waits for a person; absent: no budget. */
  readonly dailyBudgetCents?: number
}

/** The default daily budget of one principal's transfers: 5,000.00. */
export const DAILY_BUDGET_CENTS = 500_000

const account = z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'an account id: lowercase letters, digits and "_", starting with a letter')
const cents = z.number().int()

const transferInput = z.object({
  from: account.describe('Account to debit, e.g. "alice".'),
  to: account.describe('Account to credit, e.g. "bob"; must differ from `from`.'),
  amount: cents.positive().max(MAX_TRANSFER_CENTS).describe(`Amount in cents (integer minor units), 1 to ${MAX_TRANSFER_CENTS}.`),
}).strict().refine(t => t.from !== t.to, { message: 'from and to must be different accounts', path: ['to'] })

const receipt = z.object({
  transferId: z.uuid().describe('Id of the transfer.'),
  at: z.iso.datetime().describe('When it was booked, ISO 8601 UTC.'),
  from: account,
  to: account,
  amount: cents.positive().describe('Amount moved, in cents.'),
  currency: z.string().describe('ISO 4217 currency of every amount.'),
  balancesAfter: z.record(account, cents.min(0)).describe('Balances of both accounts after the transfer, in cents.'),
})
type Receipt = z.output<typeof receipt>

/**
 * A receipt may be a replay of a stored one (idempotency key), so it is checked beyond its
 * shape: two distinct accounts, both balances present and never negative.
 */
function parseReceipt (value: unknown): Receipt {
  const parsed = receipt.parse(value)
  const accounts = Object.keys(parsed.balancesAfter)
  if (parsed.from === parsed.to || accounts.length !== 2 || !accounts.includes(parsed.from) || !accounts.includes(parsed.to)) {
    throw new Error('a transfer receipt must name two distinct accounts and the balance of each')
  }
  return parsed
}

/** Resources for the audit record: `ledger:<account>` for both accounts. */
function transferAccounts (input: unknown): string[] {
  const { from, to } = (input ?? {}) as { from?: unknown, to?: unknown }
  return typeof from === 'string' && typeof to === 'string' ? [`ledger:${from}`, `ledger:${to}`] : []
}

/** `ledger_balance` and `ledger_transfer` over one store; the default export uses the demo accounts in memory. */
export function createLedgerTools (store: LedgerStore = new MemoryLedgerStore(), options: LedgerOptions = {}): AnyTool[] {
  const { approvalAboveCents, dailyBudgetCents } = options
  return [
    defineTool({
      id: 'ledger_balance',
      kind: 'read',
      description: 'Read the balance of a demo ledger account, or of every account when none is named. Amounts are integer cents.',
      shortDescription: 'Ledger balances (account: optional account id).',
      inputSchema: z.object({ account: account.optional().describe('Account to read; omit to list every account.') }).strict(),
      outputSchema: z.object({
        currency: z.string().describe('ISO 4217 currency of every amount.'),
        accounts: z.array(z.object({ account, balance: cents.min(0).describe('Balance in cents.') })),
      }),
      errors: [LEDGER_ERRORS.accountNotFound, ...store.errors],
      isReadOnly: true,
      isConcurrencySafe: true,
      touchedResourcesOf: input => {
        const a = (input as { account?: unknown } | null)?.account
        return typeof a === 'string' ? [`ledger:${a}`] : []
      },
      authorize () {},
      async execute (input) {
        return { currency: store.currency, accounts: await store.balances(input.account === undefined ? undefined : [input.account]) }
      },
    }),
    defineTool({
      id: 'ledger_transfer',
      kind: 'write',
      description: 'Move money between two demo ledger accounts, for good. Needs the scope "ledger:transfer" (and "ledger:transfer:large" above 500.00), and an idempotency key so a retry cannot pay twice. Large transfers may first wait for a person\'s approval: nothing moves until an approver says yes (REST answers 202, then re-send the same call with the Approval-Id header; MCP answers how to continue). Fails with ACCOUNT_NOT_FOUND (404) or INSUFFICIENT_FUNDS (409). Do a dry run first to see the balances after.',
      shortDescription: 'Transfer cents between ledger accounts (from, to, amount).',
      inputSchema: transferInput,
      outputSchema: receipt,
      parseOutput: parseReceipt,
      effects: ['financial', 'irreversible', 'affects-others'],
      errors: [LEDGER_ERRORS.accountNotFound, LEDGER_ERRORS.insufficientFunds, ...store.errors],
      isReadOnly: false,
      isConcurrencySafe: false,
      timeoutMs: 10_000,
      requiresIdempotencyKey: true,
      requiresApproval: approvalAboveCents === undefined ? false : input => input.amount > approvalAboveCents,
      limits: dailyBudgetCents === undefined
        ? []
        : [{ name: 'daily', per: 'principal', over: 'approve', description: 'What one principal may transfer a UTC day, in cents; past it each transfer waits for a person', budget: { amount: 'input.amount', max: dailyBudgetCents, window: 'day' } }],
      touchedResourcesOf: transferAccounts,
      mutatedResourcesOf: transferAccounts,
      authorize (input, ctx: GatewayContext) {
        denyWithoutScope(ctx.app, TRANSFER_SCOPE, 'a ledger transfer')
        if (input.amount > LARGE_TRANSFER_CENTS) denyWithoutScope(ctx.app, LARGE_TRANSFER_SCOPE, `a transfer above ${LARGE_TRANSFER_CENTS} cents`)
      },
      resolve: input => ({ ...store.preview(input), currency: store.currency }),
      async execute (input) {
        return { ...await store.transfer(input), currency: store.currency }
      },
      debugSteps (result, debug) {
        debug.step('debit', { account: result.from, amount: result.amount, balanceAfter: result.balancesAfter[result.from] })
        debug.step('credit', { account: result.to, amount: result.amount, balanceAfter: result.balancesAfter[result.to] })
      },
    }),
  ]
}

/**
 * `LEDGER_APPROVAL_ABOVE_CENTS`: transfers above it wait for a person's approval; `off` turns
 * that off. Default: above 500.00, the same line as the large-transfer scope.
 */
function approvalAbove (): number | undefined {
  return centsSetting('LEDGER_APPROVAL_ABOVE_CENTS', LARGE_TRANSFER_CENTS)
}

function centsSetting (name: string, fallback: number): number | undefined {
  const setting = process.env[name]
  if (setting === undefined || setting === '') return fallback
  if (setting === 'off') return undefined
  const cents = Number(setting)
  if (!Number.isInteger(cents) || cents < 0) throw new Error(`${name} must be a whole number of cents or "off", got ${JSON.stringify(setting)}`)
  return cents
}

/** `LEDGER_DAILY_BUDGET_CENTS`: what one principal may transfer a day before a person decides each further transfer; `off`: no budget. */
function dailyBudget (): number | undefined {
  return centsSetting('LEDGER_DAILY_BUDGET_CENTS', DAILY_BUDGET_CENTS)
}

export default createLedgerTools(await servedLedgerStore(), { approvalAboveCents: approvalAbove(), dailyBudgetCents: dailyBudget() })
