import type { AnyTool } from '../core/tool.js'
import { listingOf } from './tool-listing.js'

/** One advertised intent: its name (the tool id) and what a model reads to pick it. */
export interface IntentEntry {
  readonly intent: string
  readonly description: string
  readonly effects: string[]
  readonly readOnly: boolean
}

/** The tools among `tools` that are advertised as intents, in declaration order. */
export function intentToolsOf<T extends AnyTool> (tools: readonly T[]): T[] {
  return tools.filter(tool => tool.asIntent !== undefined)
}

export function intentEntryOf (tool: AnyTool): IntentEntry {
  return { intent: tool.id, description: tool.asIntent?.description ?? tool.description, effects: [...tool.effects], readOnly: tool.isReadOnly }
}

/**
 * One structured-output JSON Schema a model fills to pick an intent: `anyOf` one case per
 * intent, each `{ intent: <id>, input: <that tool's input schema> }`. The answer is the body
 * of `POST /intents/resolve` as it is.
 */
export function intentSchemaOf (tools: readonly AnyTool[], defaultTimeoutMs: number): Record<string, unknown> {
  return {
    title: 'Intent',
    description: 'Pick one intent and fill its input.',
    anyOf: tools.map(tool => ({
      type: 'object',
      description: intentEntryOf(tool).description,
      properties: { intent: { type: 'string', const: tool.id }, input: listingOf(tool, defaultTimeoutMs).inputSchema },
      required: ['intent', 'input'],
      additionalProperties: false,
    })),
  }
}
