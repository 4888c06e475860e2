import { ERRORS } from '../../src/index.js'

/** The catalogue as a Markdown table: in the OpenAPI description and docs/errors.md. */
export const ERROR_TABLE_MARKDOWN = [
  '| code | status | meaning | how to solve |',
  '|---|---|---|---|',
  ...Object.entries(ERRORS).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.title} | ${e.solve.replaceAll('|', '\\|')} |`),
  '',
  'A tool that fails on purpose answers with its own status and code (its `ToolError`), never a `TOOLGATE_` one; a status outside the gateway\'s own belongs in the tool\'s `errors`, so its operation documents it.',
].join('\n')
