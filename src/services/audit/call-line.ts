import type { CallRecord } from '../../core/call-record.js'

/*
 * The fields of a `call` line, written by hand. Every audited call makes one, so its cost is the
 * audit log's cost: JSON.stringify over a fresh 23-field object with its `toISOString` took 1.8
 * to 2.1 us a line (Node 20, fresh records of the bench's line, in a loop); this writes the same
 * text, field for field, byte for byte, in 0.5 us (`test/audit/call-line.test.ts` holds it to
 * JSON.stringify of that object), though it allocates a little more (1,348 bytes against 1,049:
 * the concatenation, flattened once when encoded). Anything unusual (a string with a quote, a
 * control character or a surrogate, a non-empty list, the input itself) goes through JSON.stringify.
 */

/** Who and what around one call, which the record itself does not hold (the HTTP face knows them). */
export interface CallFacts {
  readonly principal: string
  /** The client's address (`TRUST_PROXY` decides whether forwarded headers are believed). */
  readonly source?: string
  readonly requestId: string
  readonly traceId?: string
  /** The input as the caller sent it. */
  readonly input: unknown
  /** The approval this call ran under, once approvals exist. */
  readonly approvalId?: string
  /** How the call reached its upstream beyond static headers (`token_exchange`...): the mode, never the credential. */
  readonly credential?: string
}

/**
 * The line's fields as JSON members (`"event":"call",...`, no braces), in the order and form of
 * JSON.stringify of the entry: an undefined field is left out. `inputDigest` is `sha256:...`;
 * `inputJson` is the input's own JSON when inputs are written, else undefined.
 */
export function callFields (record: CallRecord, facts: Omit<CallFacts, 'input'>, inputDigest: string, inputJson: string | undefined): string {
  return `"event":"call","time":"${isoTime(record.startedAt)}","principal":"${inner(facts.principal)}"${optional('source', facts.source)}` +
    `,"tool":"${inner(record.toolId)}","kind":"${inner(record.kind)}","effects":${effects(record.effects)},"outcome":"${inner(record.outcome)}"` +
    `,"status":${number(record.status)}${optional('code', record.code)},"callId":"${inner(record.callId)}"` +
    `,"executed":${record.executed},"dryRun":${record.dryRun},"escalated":${record.escalated}` +
    `,"durationMs":${number(Math.round(record.durationMs * 1000) / 1000)},"inputDigest":"${inner(inputDigest)}"` +
    `${inputJson === undefined ? '' : `,"input":${inputJson}`},"touched":${list(record.touchedResources)},"mutated":${list(record.mutatedResources)}` +
    `,"debugSteps":${list(record.debugSteps)},"requestId":"${inner(facts.requestId)}"${optional('traceId', facts.traceId)}${optional('approvalId', facts.approvalId)}${optional('credential', facts.credential)}` +
    `${optional('limit', record.limit)}${optional('limitAction', record.limitAction)}${optional('bundle', record.bundle)}`
}

/** What JSON.stringify must handle itself: quotes, backslashes, control characters, surrogates (escaped when lone). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON must escape
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/

/** A JSON string's text between its quotes: the value itself, unless it holds what must be escaped. */
function inner (value: string): string {
  return NEEDS_ESCAPING.test(value) ? JSON.stringify(value).slice(1, -1) : value
}

function optional (key: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${key}":"${inner(value)}"`
}

/** JSON's number: the shortest round-trip text, `null` for what JSON cannot hold. */
function number (value: number): string {
  return Number.isFinite(value) ? String(value) : 'null'
}

function list (values: readonly unknown[]): string {
  return values.length === 0 ? '[]' : JSON.stringify(values)
}

/** A tool's effects are one array for all its calls: its JSON is kept with it. */
const effectsJson = new WeakMap<readonly unknown[], string>()

function effects (values: readonly unknown[]): string {
  if (values.length === 0) return '[]'
  let json = effectsJson.get(values)
  // Only a frozen list is known not to change under its cached text.
  if (json === undefined) {
    json = JSON.stringify(values)
    if (Object.isFrozen(values)) effectsJson.set(values, json)
  }
  return json
}

/** Last whole second formatted, and its `YYYY-MM-DDTHH:MM:SS.` (calls come many to a second). */
let cachedSecond = Number.NaN
let cachedPrefix = ''
/** From 1970 to the end of year 9999 the format is fixed-width; outside, `toISOString` has its own. */
const LAST_FIXED_WIDTH_MS = 253_402_300_800_000

/**
 * `new Date(epochMs).toISOString()`, without building a Date and a whole string per call.
 * @internal exported for its tests, not for the package
 */
export function isoTime (epochMs: number): string {
  if (!(epochMs >= 0 && epochMs < LAST_FIXED_WIDTH_MS)) return new Date(epochMs).toISOString()
  const ms = Math.floor(epochMs)
  const second = ms - ms % 1000
  if (second !== cachedSecond) {
    cachedSecond = second
    cachedPrefix = new Date(second).toISOString().slice(0, 20)
  }
  const millis = ms - second
  return `${cachedPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`
}
