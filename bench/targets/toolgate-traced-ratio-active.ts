import { serveVariant } from './toolgate-variants.js'

/** As toolgate-traced-ratio.ts, with TRACE_ACTIVE_SPAN=true: what the tool's active span costs. */
await serveVariant({ traced: true, sampler: { name: 'parentbased_traceidratio', arg: '0.1' }, activeSpan: true })
