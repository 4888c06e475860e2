import type { AttributeValue, Span } from '@opentelemetry/api'

/**
 * The gateway's own attributes on a span. A span of the gateway's tracer (`recorded-span.ts`)
 * takes them unchecked: the keys are the gateway's and every value is of a type it chose (a path
 * a caller sent is still a string), so only the span's limits apply, the value length among them.
 * Any other span checks them as the API has it. (Duck-typed, so that
 * the spans' code loads none of the SDK while tracing is off.)
 */
export function setOwnAttributes (span: Span, attributes: Readonly<Record<string, AttributeValue>>): void {
  const own = span as Span & { setTrusted?: (attributes: Readonly<Record<string, AttributeValue>>) => void }
  if (own.setTrusted === undefined) span.setAttributes(attributes)
  else own.setTrusted(attributes)
}
