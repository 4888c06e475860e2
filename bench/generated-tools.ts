import { z } from 'zod'
import { defineTool, type AnyTool } from '../src/index.js'
import { ownNameOf, type NamedTool } from '../src/core/bundles/named-tool.js'

/*
 * Tools made up for measuring search at scale (bench/discovery.ts, test/services/search): no
 * catalog of 5,000 real tools is at hand, so names, descriptions, effects and parameters are
 * drawn from a small vocabulary, which makes many near-ties: the search's hard case.
 */

const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'send', 'archive', 'export', 'sync']
const NOUNS = ['invoice', 'customer', 'ticket', 'file', 'calendar_event', 'message', 'repository', 'deployment', 'metric', 'contact', 'order', 'report']
const EFFECTS = [[], ['external'], ['irreversible'], ['financial', 'external'], ['affects-others']] as const

/** `count` distinct tools with names, descriptions, effects and parameters drawn from a small vocabulary. */
function generatedTools (count: number): AnyTool[] {
  return Array.from({ length: count }, (_, i) => {
    const verb = VERBS[i % VERBS.length]!
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]!
    const readOnly = verb === 'get' || verb === 'list' || verb === 'search'
    return defineTool({
      id: `${verb}_${noun}_${i}`,
      kind: readOnly ? 'read' : 'write',
      description: `${verb[0]!.toUpperCase()}${verb.slice(1)} a ${noun.replaceAll('_', ' ')} in workspace ${i % 37}.`,
      isReadOnly: readOnly,
      isConcurrencySafe: readOnly,
      effects: [...EFFECTS[i % EFFECTS.length]!],
      authorize () {},
      inputSchema: z.object({ [`${noun}Id`]: z.string().describe(`The ${noun} to ${verb}`), workspace: z.number().int() }),
      outputSchema: z.object({ ok: z.boolean() }),
      execute: () => ({ ok: true }),
    })
  })
}

export function namedTools (count: number): NamedTool[] {
  return generatedTools(count).map(ownNameOf)
}
