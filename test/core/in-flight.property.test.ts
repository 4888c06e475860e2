import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CallControl } from '../../src/core/abort.js'
import { InFlightCalls } from '../../src/core/in-flight.js'

/** One step on a pool of controls: add or delete the control at an index (repeats included). */
const step = fc.record({ add: fc.boolean(), index: fc.nat({ max: 7 }) })

describe('InFlightCalls', () => {
  it('after any sequence of adds and deletes it holds exactly the calls added and not yet deleted', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 60 }), steps => {
      const controls = Array.from({ length: 8 }, () => new CallControl())
      const list = new InFlightCalls()
      const model = new Set<CallControl>()
      for (const { add, index } of steps) {
        const control = controls[index]!
        // A call is added once, when it begins; deleting is idempotent.
        if (add && !model.has(control)) { list.add(control); model.add(control) }
        if (!add) { list.delete(control); model.delete(control) }
        expect(list.size).toBe(model.size)
        expect(new Set(list.toArray())).toEqual(model)
        expect(list.toArray()).toHaveLength(model.size)
      }
    }))
  })

  it('a snapshot may be walked while its calls delete themselves', () => {
    const list = new InFlightCalls()
    const controls = Array.from({ length: 5 }, () => new CallControl())
    for (const control of controls) list.add(control)
    for (const control of list.toArray()) list.delete(control)
    expect(list.size).toBe(0)
    expect(list.toArray()).toEqual([])
  })
})
