import { expect } from 'vitest'
import { z } from 'zod'
import { defineToolCatalog, type CatalogOptions } from '../../src/core/catalog.js'
import { ToolgateError } from '../../src/core/errors.js'
import type { CallRecord } from '../../src/core/call-record.js'
import type { ToolDeclaration } from '../../src/core/tool.js'

/** A declaration as loose as a tool file's default export, so tests can break any field. */
export type LooseDeclaration = Record<string, unknown>

/** A valid echo tool: `{ text }` in, `{ text }` out, read-only and concurrency-safe. */
export function echoDeclaration (overrides: LooseDeclaration = {}): LooseDeclaration {
  return {
    id: 'echo',
    kind: 'read',
    description: 'Echo the text back.',
    inputSchema: z.object({ text: z.string() }),
    outputSchema: z.object({ text: z.string() }),
    isReadOnly: true,
    isConcurrencySafe: true,
    authorize () {},
    execute: (input: { text: string }) => ({ text: input.text }),
    ...overrides,
  }
}

/** A write tool (neither read-only nor concurrency-safe) whose `execute` is given. */
export function writeDeclaration (id: string, execute: (input: never, ctx: never) => unknown, overrides: LooseDeclaration = {}): LooseDeclaration {
  return {
    id,
    kind: 'write',
    description: `The ${id} test tool.`,
    inputSchema: z.object({}).passthrough(),
    outputSchema: z.unknown(),
    isReadOnly: false,
    isConcurrencySafe: false,
    authorize () {},
    execute,
    ...overrides,
  }
}

const records: CallRecord[] = []

/** A catalog of loose declarations; every record it settles is kept for {@link lastRecord}. */
export function catalogOf (declarations: LooseDeclaration[], options: CatalogOptions = {}) {
  return defineToolCatalog(declarations as unknown as ToolDeclaration[], {
    ...options,
    onRecord: record => { records.push(record); options.onRecord?.(record) },
  })
}

/** The record of the call that settled last in a catalog made by {@link catalogOf}. */
export function lastRecord (): CallRecord | undefined {
  return records.at(-1)
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejectionOf (promise: Promise<unknown>): Promise<ToolgateError> {
  const settled = await promise.then(value => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))
  if (settled.ok) expect.fail(`expected a rejection, got ${JSON.stringify(settled.value)}`)
  expect(settled.error).toBeInstanceOf(ToolgateError)
  return settled.error as ToolgateError
}

/** A promise that never settles: a tool that ignores its signal. */
export function forever (): Promise<never> {
  return new Promise<never>(() => {})
}

/** Resolve after `ms` real milliseconds. */
export function sleep (ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}

/** A promise and the functions that settle it, for tools the test finishes by hand. */
export function deferred<T = void> (): { promise: Promise<T>, resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>(r => { resolve = r })
  return { promise, resolve }
}

/** Tracks how many calls run at once, and the most ever seen. */
export class Overlap {
  running = 0
  max = 0
  enter (): void { this.running++; this.max = Math.max(this.max, this.running) }
  leave (): void { this.running-- }
}

