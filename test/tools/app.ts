import { expect } from 'vitest'
import type { GatewayApp, GatewayFacts, Principal } from '../../src/core/app-context.js'
import { defineToolCatalog, ToolgateError, type AnyTool, type BindOptions, type CallRecord, type InvokeRequest, type InvokeResult } from '../../src/index.js'

export interface LogEntry { readonly level: string, readonly obj: object, readonly msg?: string }

export interface FakeAppOptions {
  readonly principal?: Partial<Principal>
  readonly gateway?: Partial<GatewayFacts>
  readonly domain?: string
}

/** A GatewayApp as the HTTP adapter would build it, with a logger that keeps its entries. */
export function fakeApp (options: FakeAppOptions = {}): GatewayApp & { readonly logs: LogEntry[] } {
  const logs: LogEntry[] = []
  const principal: Principal = { id: 'tester', scopes: ['tools:read', 'tools:call'], via: 'api-key', ...options.principal }
  const log = (level: string) => (obj: object, msg?: string): void => { logs.push({ level, obj, msg }) }
  return {
    principal,
    requestId: 'req-test',
    domain: options.domain ?? principal.id,
    log: { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') },
    gateway: { version: '0.0.0-test', startedAt: Date.now(), toolIds: () => [], inFlight: () => 0, ...options.gateway },
    logs,
  }
}

export interface Harness {
  /** Invoke through the full core pipeline, as `app` (default: the harness's app). */
  call<T = unknown> (toolId: string, input: unknown, extra?: Partial<InvokeRequest> & { app?: GatewayApp, bind?: Partial<BindOptions<GatewayApp>> }): Promise<InvokeResult<T>>
  readonly records: CallRecord[]
}

/** A catalog of `tools` and a way to call them end to end in process. */
export function harness (tools: readonly AnyTool[], app: GatewayApp = fakeApp()): Harness {
  const catalog = defineToolCatalog<GatewayApp>(tools)
  const records: CallRecord[] = []
  return {
    records,
    call: <T>(toolId: string, input: unknown, extra: Partial<InvokeRequest> & { app?: GatewayApp, bind?: Partial<BindOptions<GatewayApp>> } = {}) => {
      const { app: callApp = app, bind = {}, ...request } = extra
      const invoker = catalog.bind({ app: callApp, domain: callApp.domain, onRecord: r => records.push(r), ...bind })
      return invoker.invoke<T>({ ...request, toolId, input })
    },
  }
}

/** Await a call that must fail, and return the gateway or tool error it failed with. */
async function failure (call: Promise<unknown>): Promise<ToolgateError> {
  try {
    await call
  } catch (error) {
    expect(error).toBeInstanceOf(ToolgateError)
    return error as ToolgateError
  }
  throw new Error('expected the call to fail, but it succeeded')
}

/** Assert a call fails with this status and code. */
export async function expectFailure (call: Promise<unknown>, status: number, code: string): Promise<ToolgateError> {
  const error = await failure(call)
  expect({ status: error.status, code: error.code, detail: error.message }).toMatchObject({ status, code })
  return error
}
