import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import type { EncodedBatch, EncodedBatchExporter } from './span-batches.js'

/**
 * OTLP/HTTP protobuf, as the SDK's own exporter sends it (the same transport, so the same
 * `OTEL_EXPORTER_OTLP_*` headers, timeout, compression and retries), of requests already
 * encoded (`span-batches.ts`): the same bytes the SDK's serializer makes of those spans.
 */
export function protobufExporter (url: string): EncodedBatchExporter {
  const options = convertLegacyHttpOptions({ url }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' })
  const serializer = { serializeRequest: (batch: EncodedBatch) => batch.bytes, deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data) }
  const metrics = { name: 'span' as const, countItems: (batch: EncodedBatch) => batch.spans }
  return new OTLPExporterBase<EncodedBatch>(createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', metrics, undefined))
}
