/**
 * The tools the toolgate target serves: `echo`, plus generated filler tools so the catalog,
 * the router, the OpenAPI document and the metrics registry have the size of a large gateway.
 */
import { z } from 'zod'
import { defineTool, type AnyTool, type Effect } from '../../src/index.js'
import { echo, EchoInput, EchoOutput } from './echo.js'

export const echoTool: AnyTool = defineTool({
  id: 'echo',
  kind: 'read',
  description: 'Echo the text back with its length.',
  inputSchema: EchoInput,
  outputSchema: EchoOutput,
  isReadOnly: true,
  isConcurrencySafe: true,
  authorize () {},
  execute: echo,
})

const EFFECT_SETS: Effect[][] = [[], ['external'], ['irreversible'], ['affects-others', 'financial']]

/** A filler tool with its own schema objects, as distinct tools would have. */
export function fillerTool (index: number): AnyTool {
  const id = `filler_${String(index).padStart(4, '0')}`
  return defineTool({
    id,
    kind: index % 2 === 0 ? 'read' : 'write',
    description: `Generated tool number ${index}; it reports what it was asked.`,
    inputSchema: z.object({
      key: z.string().min(1).max(64).describe('What to look up'),
      limit: z.number().int().min(1).max(100).default(10),
      tags: z.array(z.string().max(32)).max(8).optional(),
    }),
    outputSchema: z.object({ key: z.string(), limit: z.number().int(), found: z.boolean() }),
    effects: EFFECT_SETS[index % EFFECT_SETS.length],
    isReadOnly: index % 2 === 0,
    isConcurrencySafe: true,
    authorize () {},
    execute: ({ key, limit }) => ({ key, limit, found: false }),
  })
}

/** `echo` first, then `count - 1` fillers. */
export function benchTools (count: number): AnyTool[] {
  return [echoTool, ...Array.from({ length: count - 1 }, (_, i) => fillerTool(i + 1))]
}
