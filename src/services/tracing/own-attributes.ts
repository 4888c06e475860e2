import type { AttributeValue, Span } from '@opentelemetry/api'

/**
 * The gateway's own attributes on a span. A span of the gateway's tracer (`recorded-span.ts`)
 * takes them as they are: their keys and values are the gateway's, never a caller's, so only
 * the span's limits apply. Any other span checks them as the API has it. (Duck-typed, so that
 * the spans' code loads none of the SDK while tracing is off.)
 */
export function setOwnAttributes (span: Span, attributes: Readonly<Record<string, AttributeValue>>): void {
  const own = span as Span & { setTrusted?: (attributes: Readonly<Record<string, AttributeValue>>) => void }
  if (own.setTrusted === undefined) span.setAttributes(attributes)
  else own.setTrusted(attributes)
}
