/*
 * The JSON Schema types on their own: `schema.ts` imports the capture (`schema-capture.ts`),
 * and both speak of these, so neither imports the other for them.
 */

/** A JSON Schema object (2020-12, without `$schema`). */
export type JsonSchema = Record<string, unknown>
/** Which side of a schema: what it accepts (`input`) or what it produces (`output`). */
export type SchemaIo = 'input' | 'output'
