import { z } from 'zod'
import { GatewayError, type ErrorCode, type InputIssue } from './errors.js'
import { IDEMPOTENCY_KEY } from './idempotency/fingerprint.js'

/*
 * Every option a call carries besides its input, defined once. Each face finds them where it
 * carries them (REST: the query and headers; MCP: `_meta`, and over HTTP the REST spellings
 * too; the intents route; in-process: `InvokeRequest` and `BindOptions.mode`) and hands what it
 * found to `readCallOptions`, which answers the options typed or refuses with a 400 that names
 * every malformed one. An option that is present is never ignored: a malformed dry run that
 * ran for real is the failure this module exists to prevent.
 */

/** The longest approval id taken: a longer one names no approval and is refused as malformed. */
const APPROVAL_ID_MAX = 128
/** The longest wait for a decision a call may ask for (the gateway then holds it to its own maximum). */
const MAX_WAIT_SECONDS = 999_999

/** How a value arrives: as the core takes it (in-process), as JSON spells it (MCP `_meta`), or as text (a URL, a header). */
type OptionForm = 'value' | 'json' | 'text'

interface OptionSpec<T> {
  /** In-process: the `InvokeRequest` field (or the binding's `mode`). */
  readonly value: z.ZodType<T>
  /** A JSON value in a protocol message (default: as `value`). */
  readonly json?: z.ZodType<T>
  /** Text in a URL or a header. */
  readonly text: z.ZodType<T>
  /** What a refusal of this option is coded as (default: `TOOLGATE_INVALID_INPUT`). */
  readonly code?: ErrorCode
  readonly description: string
}

const flagText = z.enum(['true', 'false']).transform(text => text === 'true')
const mode = z.enum(['normal', 'plan'])
const idempotencyKey = z.string().regex(IDEMPOTENCY_KEY, 'an idempotency key is 1 to 255 visible ASCII characters')
const approvalId = z.string().min(1).max(APPROVAL_ID_MAX)
const seconds = z.number().int().min(0).max(MAX_WAIT_SECONDS)

export const CALL_OPTIONS = {
  dryRun: {
    value: z.boolean(), text: flagText,
    description: 'true: validate and authorize, return what the call would do, execute nothing',
  },
  mode: {
    value: mode, text: mode,
    description: 'plan: only read-only tools run; others are refused with 403',
  },
  escalate: {
    value: z.boolean(), text: flagText,
    description: 'true: ask to escalate; needs a tool with supportsEscalation and a person\'s approval',
  },
  idempotencyKey: {
    value: idempotencyKey, text: idempotencyKey, code: 'TOOLGATE_INVALID_IDEMPOTENCY_KEY',
    description: 'Run at most once per key: a repeat with the same input replays the stored answer',
  },
  approvalId: {
    value: approvalId, text: approvalId,
    description: 'Run the call this approval was given for: once (a repeat replays its answer)',
  },
  waitForApprovalMs: {
    value: z.number().int().min(0).max(MAX_WAIT_SECONDS * 1000),
    json: seconds.transform(s => s * 1000),
    text: z.string().regex(/^\d{1,6}$/, 'whole seconds, 0 to 999999').transform(s => Number(s) * 1000),
    description: 'Seconds to wait for an approval\'s decision before answering',
  },
} as const satisfies Record<string, OptionSpec<unknown>>

export type CallOptionName = keyof typeof CALL_OPTIONS

/** The options of one call, typed. */
export interface CallOptions {
  readonly dryRun?: boolean
  readonly mode?: 'normal' | 'plan'
  readonly escalate?: boolean
  readonly idempotencyKey?: string
  readonly approvalId?: string
  readonly waitForApprovalMs?: number
}

/** One option as a face found it: which, in what form, and where (a JSON pointer into what was sent). */
export interface FoundOption {
  readonly name: CallOptionName
  readonly form: OptionForm
  readonly raw: unknown
  readonly pointer: string
  /** How the face spells it, for the message (default: `name`). */
  readonly label?: string
}

const NONE: CallOptions = Object.freeze({})

/**
 * The options of a call from everything a face found. Each is parsed by its one definition;
 * one that is malformed, or given twice with two meanings, refuses the whole call: a 400
 * (`GatewayError`) with an `errors` entry for each, nothing run.
 */
export function readCallOptions (found: Iterable<FoundOption>): CallOptions {
  let options: Record<string, unknown> | undefined
  let issues: InputIssue[] | undefined
  let first: FoundOption | undefined
  const seen = new Map<CallOptionName, FoundOption>()
  for (const entry of found) {
    const spec: OptionSpec<unknown> = CALL_OPTIONS[entry.name]
    const schema = entry.form === 'text' ? spec.text : entry.form === 'json' ? spec.json ?? spec.value : spec.value
    const parsed = schema.safeParse(entry.raw)
    options ??= {}
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      ;(issues ??= []).push({ pointer: entry.pointer, message: `${entry.label ?? entry.name}: ${issue?.message ?? 'invalid value'}`, code: issue?.code ?? 'invalid_value' })
      first ??= entry
      continue
    }
    const earlier = seen.get(entry.name)
    if (earlier !== undefined && options[entry.name] !== parsed.data) {
      (issues ??= []).push({ pointer: entry.pointer, message: `${entry.label ?? entry.name} says otherwise than ${earlier.label ?? earlier.name} (${earlier.pointer}): send the option once`, code: 'conflicting_option' })
      first ??= entry
      continue
    }
    seen.set(entry.name, entry)
    options[entry.name] = parsed.data
  }
  if (issues !== undefined) throw optionError(first!.name, issues)
  return options === undefined ? NONE : options
}

/** The refusal of `issues`, coded as the first option's (an idempotency key has a code of its own). */
function optionError (name: CallOptionName, issues: InputIssue[]): GatewayError {
  const spec: OptionSpec<unknown> = CALL_OPTIONS[name]
  const detail = issues.length === 1 ? `invalid call option: ${issues[0]!.message}` : `${issues.length} invalid call options: ${issues.map(issue => issue.message).join('; ')}`
  return new GatewayError(spec.code ?? 'TOOLGATE_INVALID_INPUT', detail, { errors: issues })
}

/**
 * The options of an in-process call, checked as they were given: `dryRun: 'true'` is refused,
 * not read as "not a dry run". Nothing is read when no option is set (the common path).
 */
export function checkInvokeOptions (request: { readonly [K in Exclude<CallOptionName, 'mode'>]?: unknown }): void {
  if (request.dryRun === undefined && request.escalate === undefined && request.idempotencyKey === undefined &&
    request.approvalId === undefined && request.waitForApprovalMs === undefined) return
  readCallOptions(presentOf(request))
}

function * presentOf (request: { readonly [K in CallOptionName]?: unknown }): Generator<FoundOption> {
  for (const name of Object.keys(CALL_OPTIONS) as CallOptionName[]) {
    const raw = request[name]
    if (raw !== undefined) yield { name, form: 'value', raw, pointer: `/${name}` }
  }
}

/** The binding's mode as given in-process: anything but the two modes is refused. */
export function checkMode (value: unknown): 'normal' | 'plan' | undefined {
  if (value === undefined) return undefined
  return readCallOptions([{ name: 'mode', form: 'value', raw: value, pointer: '/mode' }]).mode
}
