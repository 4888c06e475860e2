import { GatewayError, ToolError, ToolgateError, type ErrorCode } from '../errors.js'
import { fingerprintOf, IDEMPOTENCY_KEY } from '../idempotency/fingerprint.js'
import type { IdempotencyStore, StoredResult } from '../idempotency/store.js'
import type { AnyTool } from '../tool.js'
import { isWithContent } from '../content.js'
import type { Call, Presentation } from '../types.js'
import { parseOutput, toolFailure } from './execution.js'
import type { Settled } from './run-execute.js'

/** Step 7 before anything runs: a tool that requires a key refuses a call without one. */
export function checkIdempotencyKey (tool: AnyTool, key: string | undefined, dryRun: boolean): void {
  if (key === undefined) {
    if (tool.requiresIdempotencyKey === true && !dryRun) {
      throw new GatewayError('TOOLGATE_IDEMPOTENCY_KEY_REQUIRED', `"${tool.id}" requires an Idempotency-Key: send a new unique key for each intended call`)
    }
    return
  }
  if (!IDEMPOTENCY_KEY.test(key)) throw new GatewayError('TOOLGATE_INVALID_IDEMPOTENCY_KEY', 'an idempotency key is 1 to 255 visible ASCII characters')
}

/**
 * Step 7: run `call` at most once per (scope, tool, key). A repeat with the same input replays
 * the stored answer (a success through `parseOutput` again); with another input it is 422;
 * while the first call runs, or while its outcome is unknown, it is 409. A call that never
 * reached `execute` frees its key.
 */
export async function idempotent (
  call: Call, key: string, run: () => Promise<unknown>,
): Promise<{ value: unknown, replayed: boolean }> {
  const { tool, input, record, handle } = call
  const { store, ttlMs } = call.env.idempotency
  const scope = call.binding.idempotencyScope
  const storeKey = `${scope.length}:${scope}|${tool.id}|${key}`
  const fingerprint = fingerprintOf(input)
  const claim = await guarded(() => store.claim(storeKey, fingerprint, ttlMs, scope))
  if (claim.state === 'full') throw storeFull(claim.scope, claim.retryAfterMs)
  if (claim.state !== 'claimed') {
    if (claim.fingerprint !== fingerprint) throw new GatewayError('TOOLGATE_IDEMPOTENCY_MISMATCH', 'this idempotency key was used with a different input')
    if (claim.state === 'running') throw new GatewayError('TOOLGATE_CONFLICT', 'a call with this idempotency key is still running or its outcome is not known yet', { retryAfter: 1 })
    return { value: replay(call, claim.result), replayed: true }
  }
  try {
    const value = await run()
    await completeQuietly(store, storeKey, fingerprint, storedValue(value, handle.presentation), ttlMs, scope)
    return { value, replayed: false }
  } catch (error) {
    if (!record.executed) {
      await store.release(storeKey, scope).catch(() => {})
    } else if (handle.late !== undefined) {
      // Aborted mid-run: the key stays claimed (retries get 409) until the tool really settles.
      void handle.late.then(settled => completeQuietly(store, storeKey, fingerprint, settledResult(tool, settled), ttlMs, scope))
    } else {
      await completeQuietly(store, storeKey, fingerprint, errorResult(error), ttlMs, scope)
    }
    throw error
  }
}

/**
 * A full store refuses the new key rather than forget a record someone may retry: 429 when it
 * is this caller's own share, 503 when the whole store is full. Nothing ran.
 */
function storeFull (scope: 'owner' | 'store', retryAfterMs: number): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000))
  return scope === 'owner'
    ? new GatewayError('TOOLGATE_IDEMPOTENCY_QUOTA', 'your idempotency records use up your share of the store; retry when older ones expire, or call without a key', { retryAfter })
    : new GatewayError('TOOLGATE_STORE_UNAVAILABLE', 'the idempotency store is full', { retryAfter })
}

/** A store that cannot be reached fails the call closed: 503, nothing runs. */
async function guarded<T> (operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    throw new GatewayError('TOOLGATE_STORE_UNAVAILABLE', 'the idempotency store cannot be reached', { retryAfter: 1 }, { cause: error })
  }
}

/**
 * The call already took effect: a store failure now must not turn it into an error that
 * invites a retry. The claim then stays until it expires, so a retry gets 409, never a rerun.
 */
async function completeQuietly (store: IdempotencyStore, key: string, fingerprint: string, result: StoredResult, ttlMs: number, owner: string): Promise<void> {
  try {
    await store.complete(key, fingerprint, result, ttlMs, owner)
  } catch { /* see above: the claim expires on its own */ }
}

/** A value with the content its tool answered beside it: a replay over MCP answers the same blocks. */
function storedValue (value: unknown, presentation: Presentation | undefined): StoredResult {
  if (presentation === undefined) return { type: 'value', value }
  return { type: 'value', value, content: presentation.content, ...(presentation.hasStructuredContent ? { structuredContent: presentation.structuredContent } : {}) }
}

function replay (call: Call, result: StoredResult): unknown {
  const { tool, record } = call
  record.outcome = 'replayed'
  if (result.type === 'value') {
    if (result.content !== undefined) {
      const hasStructuredContent = 'structuredContent' in result
      call.handle.presentation = { content: result.content, hasStructuredContent, ...(hasStructuredContent ? { structuredContent: result.structuredContent } : {}) }
    }
    try {
      return tool.parseOutput(result.value)
    } catch (thrown) {
      throw new GatewayError('TOOLGATE_INVALID_OUTPUT', `the stored result of "${tool.id}" does not match its output schema`, {}, { cause: thrown })
    }
  }
  throw result.family === 'tool'
    ? new ToolError(result.status, result.code, result.message, result.extensions, { replayed: true })
    : new GatewayError(result.code as ErrorCode, result.message, result.extensions, { replayed: true })
}

function errorResult (error: unknown): StoredResult {
  const e = error instanceof ToolgateError ? error : new GatewayError('TOOLGATE_INTERNAL')
  return { type: 'error', family: e.family, status: e.status, code: e.code, message: e.message, extensions: { ...e.extensions } }
}

/** What an aborted call's tool really did, judged exactly as a call that ran to the end. */
function settledResult (tool: AnyTool, settled: Settled): StoredResult {
  if (settled.type === 'thrown') return errorResult(toolFailure(tool, settled.thrown))
  try {
    // A late answer keeps its output; its blocks are for an MCP answer no client waits for any more.
    return { type: 'value', value: parseOutput(tool, isWithContent(settled.value) ? settled.value.output : settled.value) }
  } catch (error) {
    return errorResult(error)
  }
}
