/**
 * The in-process overhead of `invoke` over doing its essential work by hand: parse the input,
 * call the function, parse the output. Run with `npx tsx bench/invoke-overhead.ts [calls]`.
 *
 * The direct baseline is synchronous, so the overhead includes the promise `invoke` returns.
 */
import { z } from 'zod'
import { defineToolCatalog } from '../src/index.js'

const CALLS = Number(process.argv[2] ?? 200_000)
const WARMUP = 20_000
const ROUNDS = 3

const inputSchema = z.object({ text: z.string() })
const outputSchema = z.object({ text: z.string() })
const execute = (input: { text: string }): { text: string } => ({ text: input.text })
const input = { text: 'hello' }

const invoker = defineToolCatalog([{
  id: 'echo', kind: 'read', description: 'Echo the text back.',
  inputSchema, outputSchema, isReadOnly: true, isConcurrencySafe: true,
  authorize () {}, execute,
}]).bind({ app: undefined })

function direct (): unknown {
  return outputSchema.parse(execute(inputSchema.parse(input)))
}

async function viaInvoke (): Promise<unknown> {
  return (await invoker.invoke({ toolId: 'echo', input })).value
}

/** Nanoseconds per call of `fn`, the best of a few rounds of `calls` calls each. */
async function nsPerCall (fn: () => unknown, calls: number): Promise<number> {
  let best = Infinity
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) await fn()
    best = Math.min(best, Number(process.hrtime.bigint() - started) / calls)
  }
  return best
}

await nsPerCall(direct, WARMUP)
await nsPerCall(viaInvoke, WARMUP)
const directNs = await nsPerCall(direct, CALLS)
const invokeNs = await nsPerCall(viaInvoke, CALLS)

console.log(`calls per round:  ${CALLS} (best of ${ROUNDS})`)
console.log(`direct parse+fn+parse: ${directNs.toFixed(0)} ns/call`)
console.log(`invoke:                ${invokeNs.toFixed(0)} ns/call`)
console.log(`overhead of invoke:    ${((invokeNs - directNs) / 1000).toFixed(2)} µs/call`)
