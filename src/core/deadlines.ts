/**
 * Hard timeouts for many calls that share a few timeout values: one Node timer per value,
 * armed for the earliest deadline, instead of a `setTimeout` and a `clearTimeout` per call.
 * Calls with the same timeout expire in the order they started, so each value's deadlines are
 * a FIFO list: starting one appends, cancelling one unlinks it, both in constant time.
 */
export class Deadline {
  /** `performance.now()` at which `fire` runs. */
  readonly at: number
  previous: Deadline | undefined
  next: Deadline | undefined
  list: DeadlineList | undefined

  constructor (at: number, readonly fire: () => void) {
    this.at = at
  }
}

class DeadlineList {
  head: Deadline | undefined
  tail: Deadline | undefined
  timer: NodeJS.Timeout | undefined

  constructor (readonly ms: number) {}

  append (deadline: Deadline): void {
    deadline.list = this
    deadline.previous = this.tail
    if (this.tail === undefined) this.head = deadline
    else this.tail.next = deadline
    this.tail = deadline
    if (this.timer === undefined) this.timer = setTimeout(() => { this.expire() }, this.ms)
    // The timer keeps the process alive only while some call waits on it.
    else if (deadline === this.head) this.timer.ref()
  }

  remove (deadline: Deadline): void {
    if (deadline.previous === undefined) this.head = deadline.next
    else deadline.previous.next = deadline.next
    if (deadline.next === undefined) this.tail = deadline.previous
    else deadline.next.previous = deadline.previous
    deadline.previous = deadline.next = deadline.list = undefined
    // Left armed (re-arming costs more than one spare wake-up), but no longer holding the process.
    if (this.head === undefined) this.timer?.unref()
  }

  expire (): void {
    const now = performance.now()
    // Node may run a timer up to a millisecond before its nominal time.
    while (this.head !== undefined && this.head.at <= now + 1) {
      const due = this.head
      this.remove(due)
      due.fire()
    }
    if (this.head === undefined) {
      this.timer = undefined
      return
    }
    this.timer = setTimeout(() => { this.expire() }, Math.max(1, this.head.at - now))
  }
}

const lists = new Map<number, DeadlineList>()

/** Run `fire` in `ms` milliseconds unless `cancelDeadline` comes first. */
export function startDeadline (ms: number, fire: () => void): Deadline {
  let list = lists.get(ms)
  if (list === undefined) {
    list = new DeadlineList(ms)
    lists.set(ms, list)
  }
  const deadline = new Deadline(performance.now() + ms, fire)
  list.append(deadline)
  return deadline
}

/** Cancel a deadline; cancelling one that fired or was cancelled changes nothing. */
export function cancelDeadline (deadline: Deadline | undefined): void {
  deadline?.list?.remove(deadline)
}
