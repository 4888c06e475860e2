import { MAX_QUERY_LENGTH, SEARCH_LIMIT } from '../search/query.js'

/*
 * Discovery mode's three tools, as `tools/list` shows them: stable names, descriptions written
 * for a model (what to do first, what comes back, what to do next) and strict input schemas.
 */

const SEARCH_TOOLS = 'search_tools'
export const DESCRIBE_TOOL = 'describe_tool'
export const CALL_TOOL = 'call_tool'


const NAME = { type: 'string', minLength: 1, maxLength: 128, description: 'A tool\'s name, exactly as search_tools gave it.' }

const SEARCH_SPEC = {
  name: SEARCH_TOOLS,
  title: 'Search tools',
  description: 'Find the tools of this server that fit a task. This server has too many tools to list: search first. ' +
    'Say what you want done in a few plain words (for example "refund a card payment" or "read a file"); ' +
    'you get the best-matching tools, best first, each with its name, a one-line description, its declared side effects and whether it only reads. ' +
    'Then call describe_tool for the one you want (its full input schema) and call_tool to run it. Search again with other words if nothing fits.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH, description: 'What the tool should do, in a few words (at most 32).' },
      limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMIT.max, default: SEARCH_LIMIT.default, description: 'How many tools to return at most.' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            description: { type: 'string' },
            effects: { type: 'array', items: { type: 'string' }, description: 'Declared side effects; empty when none are declared.' },
            readOnly: { type: 'boolean' },
          },
          required: ['name', 'description', 'effects', 'readOnly'],
        },
      },
    },
    required: ['tools'],
  },
  annotations: { title: 'Search tools', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
}

const DESCRIBE_SPEC = {
  name: DESCRIBE_TOOL,
  title: 'Describe tool',
  description: 'Get everything about one tool found with search_tools: its full description, the JSON Schema of its arguments and of its result, and its annotations (read-only, destructive, open world). ' +
    'Read it before call_tool, so that the arguments you send are right the first time.',
  inputSchema: { type: 'object', properties: { name: NAME }, required: ['name'], additionalProperties: false },
  outputSchema: {
    type: 'object',
    properties: { name: { type: 'string' }, description: { type: 'string' }, inputSchema: { type: 'object' } },
    required: ['name', 'description', 'inputSchema'],
  },
  annotations: { title: 'Describe tool', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
}

const CALL_SPEC = {
  name: CALL_TOOL,
  title: 'Call tool',
  description: 'Run one tool of this server by its name, with its arguments as describe_tool gave their schema. ' +
    'The answer is that tool\'s own result (or its error, which says what to fix). The call is exactly the tool\'s call: ' +
    'it may need a person\'s approval, and it has the tool\'s side effects.',
  inputSchema: {
    type: 'object',
    properties: {
      name: NAME,
      arguments: { type: 'object', description: 'The tool\'s arguments, an object matching its input schema; omit when it takes none.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
  // It runs any tool: the worst case of every hint, as MCP reads an absent one.
  annotations: { title: 'Call tool', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
}

/** `tools/list` in discovery mode: the same three tools for every caller, made once. */
export const DISCOVERY_LISTING = JSON.stringify({ tools: [SEARCH_SPEC, DESCRIBE_SPEC, CALL_SPEC] })

export function isDiscoveryTool (name: unknown): name is string {
  return name === SEARCH_TOOLS || name === DESCRIBE_TOOL || name === CALL_TOOL
}
