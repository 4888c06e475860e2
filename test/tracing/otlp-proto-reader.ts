/*
 * OTLP/HTTP protobuf, read by hand for the test receiver: the wire format (varints, fixed
 * widths, length-delimited fields) and the field numbers of the trace and common protos, so
 * what the gateway sends is checked by something that shares no code with what wrote it.
 */

/** One field as read: its number and its raw value (a number, or the bytes of a length-delimited field). */
interface Field { readonly number: number, readonly value: number | Uint8Array }

function fields (bytes: Uint8Array): Field[] {
  const out: Field[] = []
  let pos = 0
  const varint = (): number => {
    let result = 0
    let scale = 1
    for (;;) {
      const byte = bytes[pos++]!
      result += (byte & 0x7f) * scale
      scale *= 128
      if (byte < 0x80) return result
    }
  }
  while (pos < bytes.length) {
    const tag = varint()
    const wire = tag & 7
    const number = Math.floor(tag / 8)
    if (wire === 0) {
      out.push({ number, value: varint() })
    } else if (wire === 1) {
      out.push({ number, value: bytes.subarray(pos, pos + 8) })
      pos += 8
    } else if (wire === 2) {
      const length = varint()
      out.push({ number, value: bytes.subarray(pos, pos + length) })
      pos += length
    } else if (wire === 5) {
      out.push({ number, value: new DataView(bytes.buffer, bytes.byteOffset + pos, 4).getUint32(0, true) })
      pos += 4
    } else {
      throw new Error(`wire type ${wire} at byte ${pos}: not protobuf OTLP`)
    }
  }
  return out
}

const all = (list: Field[], number: number): Array<number | Uint8Array> => list.filter(f => f.number === number).map(f => f.value)
const one = (list: Field[], number: number): number | Uint8Array | undefined => all(list, number)[0]
const text = (value: number | Uint8Array | undefined): string | undefined => value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : undefined
const hex = (value: number | Uint8Array | undefined): string | undefined => value instanceof Uint8Array ? Buffer.from(value).toString('hex') : undefined

function anyValue (bytes: Uint8Array): unknown {
  const list = fields(bytes)
  const [field] = list
  if (field === undefined) return undefined
  switch (field.number) {
    case 1: return text(field.value)
    case 2: return field.value === 1
    case 3: return field.value
    case 4: return Buffer.from(field.value as Uint8Array).readDoubleLE(0)
    case 5: return all(fields(field.value as Uint8Array), 1).map(item => anyValue(item as Uint8Array))
    default: return undefined
  }
}

function attributes (list: Field[], number: number): Record<string, unknown> {
  return Object.fromEntries(all(list, number).map(kv => {
    const pair = fields(kv as Uint8Array)
    return [text(one(pair, 1)), anyValue((one(pair, 2) ?? new Uint8Array()) as Uint8Array)]
  }))
}

/** The spans of an `ExportTraceServiceRequest`, each with its resource's attributes. */
export function readTraceRequest (body: Uint8Array): Array<{ span: Record<string, unknown>, resource: Record<string, unknown> }> {
  const out: Array<{ span: Record<string, unknown>, resource: Record<string, unknown> }> = []
  for (const resourceSpans of all(fields(body), 1)) {
    const rs = fields(resourceSpans as Uint8Array)
    const resource = attributes(fields((one(rs, 1) ?? new Uint8Array()) as Uint8Array), 1)
    for (const scopeSpans of all(rs, 2)) {
      for (const raw of all(fields(scopeSpans as Uint8Array), 2)) {
        const span = fields(raw as Uint8Array)
        const status = fields((one(span, 15) ?? new Uint8Array()) as Uint8Array)
        out.push({
          resource,
          span: {
            traceId: hex(one(span, 1)),
            spanId: hex(one(span, 2)),
            parentSpanId: hex(one(span, 4)),
            name: text(one(span, 5)),
            // OTLP counts kinds from 1 (0 is unspecified), as OTLP/JSON does.
            kind: one(span, 6) ?? 0,
            attributes: attributes(span, 9),
            status: { code: one(status, 3) ?? 0, message: text(one(status, 2)) },
          },
        })
      }
    }
  }
  return out
}
