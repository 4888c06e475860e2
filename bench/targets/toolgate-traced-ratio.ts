import { serveVariant } from './toolgate-variants.js'

/** The bench's toolgate traced with parent-based sampling at 10 % (parentbased_traceidratio, 0.1). */
await serveVariant({ traced: true, sampler: { name: 'parentbased_traceidratio', arg: '0.1' } })
