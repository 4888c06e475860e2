import { serveVariant } from './toolgate-variants.js'

/** The bench's toolgate with every call traced (always_on) and exported to a local receiver. */
await serveVariant({ traced: true })
