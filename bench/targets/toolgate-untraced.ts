import { serveVariant } from './toolgate-variants.js'

/** The bench's toolgate built as the traced variants are, with tracing off: their reference. */
await serveVariant({})
