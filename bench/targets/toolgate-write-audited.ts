import { serveVariant } from './toolgate-variants.js'

/** The bench's toolgate serving echo declared as a write, every call audited to a file. */
await serveVariant({ writing: true, audited: true })
