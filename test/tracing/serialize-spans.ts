import type { ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { writeResource, writeSchemaUrl, writeScope, writeSpanField, type OtlpResource, type OtlpScope } from '../../src/services/tracing/otlp-protobuf.js'
import { Encoder } from '../../src/services/tracing/protobuf-writer.js'

/*
 * A whole OTLP request of any spans, of any resources and scopes, from toolgate's encoder: the
 * reference the tests hold to the SDK's serializer byte for byte, and the gateway's batches
 * (`SpanEnvelope` around spans encoded as they ended) to it. The gateway itself never writes
 * more than one resource and scope, so this lives with the tests.
 */

export function serializeSpans (spans: readonly ReadableSpan[]): Uint8Array {
  const out = new Encoder(Buffer.allocUnsafe(64 * 1024))
  for (const [resource, scopes] of groupSpans(spans)) {
    out.tag(1, 2)
    const resourceSpans = out.begin()
    writeResource(out, resource)
    for (const scoped of scopes.values()) {
      out.tag(2, 2)
      writeScopeSpans(out, scoped)
    }
    writeSchemaUrl(out, resource.schemaUrl)
    out.end(resourceSpans)
  }
  return out.finish()
}

/** By resource, then by instrumentation scope, each by identity and in the order first seen (as the SDK groups them). */
function groupSpans (spans: readonly ReadableSpan[]): Map<OtlpResource, Map<OtlpScope, ReadableSpan[]>> {
  const resources = new Map<OtlpResource, Map<OtlpScope, ReadableSpan[]>>()
  for (const span of spans) {
    let scopes = resources.get(span.resource)
    if (scopes === undefined) resources.set(span.resource, scopes = new Map())
    let scoped = scopes.get(span.instrumentationScope)
    if (scoped === undefined) scopes.set(span.instrumentationScope, scoped = [])
    scoped.push(span)
  }
  return resources
}

function writeScopeSpans (out: Encoder, spans: readonly ReadableSpan[]): void {
  const start = out.begin()
  const scope = spans[0]!.instrumentationScope
  writeScope(out, scope)
  for (const span of spans) writeSpanField(out, span)
  writeSchemaUrl(out, scope.schemaUrl)
  out.end(start)
}
