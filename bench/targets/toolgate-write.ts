import { serveVariant } from './toolgate-variants.js'

/** The bench's toolgate serving echo declared as a write: the reference for the audited target. */
await serveVariant({ writing: true })
