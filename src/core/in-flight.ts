import type { CallControl } from './abort.js'

/**
 * The calls in flight, so that shutdown can wait for them and then abort them. An intrusive
 * doubly linked list through the controls' own links: adding and removing a call is a few
 * pointer writes, where a `Set` of objects hashes every new call (a measurable share of a
 * call's cost on the hot path).
 */
export class InFlightCalls {
  #head: CallControl | undefined
  #size = 0

  get size (): number {
    return this.#size
  }

  add (control: CallControl): void {
    control.previous = undefined
    control.next = this.#head
    if (this.#head !== undefined) this.#head.previous = control
    this.#head = control
    this.#size++
  }

  /** Remove a call that was added; removing it twice changes nothing. */
  delete (control: CallControl): void {
    if (control.previous === undefined && this.#head !== control) return
    if (control.previous === undefined) this.#head = control.next
    else control.previous.next = control.next
    if (control.next !== undefined) control.next.previous = control.previous
    control.previous = undefined
    control.next = undefined
    this.#size--
  }

  /** A snapshot: aborting a call may remove it while the caller walks the list. */
  toArray (): CallControl[] {
    const calls: CallControl[] = []
    for (let control = this.#head; control !== undefined; control = control.next) calls.push(control)
    return calls
  }
}
