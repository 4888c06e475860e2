/**
 * The one tool every target serves: the same zod schemas, the same work, the same request. A
 * target that answers faster by doing less would measure nothing.
 */
import { z } from 'zod'

export const EchoInput = z.object({ text: z.string().min(1).max(1000) })
export const EchoOutput = z.object({ text: z.string(), length: z.number().int() })
export type EchoIn = z.output<typeof EchoInput>
export type EchoOut = z.input<typeof EchoOutput>

export function echo ({ text }: EchoIn): EchoOut {
  return { text, length: text.length }
}

/** The REST path of every target but the MCP server, which has one endpoint. */
export const ECHO_PATH = '/tools/echo'
export const ECHO_TEXT = 'hello from the toolgate benchmark'

/** The key the toolgate target configures (as its digest) and the load generator sends. */
export const BENCH_API_KEY = 'bench-key-0123456789abcdef'
