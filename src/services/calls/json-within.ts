/** JSON for the response body, inside the pipeline: circular or oversized output is a 502. */
export function jsonWithin (maxBytes: number): (value: unknown) => string {
  return value => {
    const body = JSON.stringify(value === undefined ? null : value)
    // A UTF-16 length is a lower bound of the UTF-8 size: check the cheap bound first.
    if (body.length > maxBytes || (body.length * 3 > maxBytes && Buffer.byteLength(body) > maxBytes)) {
      throw new RangeError(`the output is larger than the ${maxBytes}-byte response limit`)
    }
    return body
  }
}
