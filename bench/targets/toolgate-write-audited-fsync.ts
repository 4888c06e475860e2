import { serveVariant } from './toolgate-variants.js'

/** The audited writing echo with AUDIT_FSYNC=true: every write of audit lines is fdatasync'd. */
await serveVariant({ writing: true, audited: true, fsync: true })
