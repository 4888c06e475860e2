import type { FastifyInstance } from 'fastify'
import { boundBreachOf, inputTooComplex, type InputBounds } from '../../src/core/input-bounds.js'
import { boundSetting } from '../../src/services/config.js'

/**
 * JSON bodies on every route of the gateway, bounded as they are parsed: a body nested deeper
 * or wider than `bounds` is a 400 before any hook, schema or step walks it (the pipeline
 * bounds an input again, for callers that never pass through here). Prototype poisoning is
 * refused as before. `POST /mcp` parses its own, with room for the JSON-RPC envelope.
 */
export function boundJsonBodies (app: FastifyInstance, bounds: InputBounds): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parse(request, body as string, (error, value) => {
      if (error !== null) { done(error); return }
      const breach = boundBreachOf(value, bounds)
      if (breach === undefined) done(null, value)
      else done(inputTooComplex(breach, 'the body', boundSetting))
    })
  })
}
