/**
 * Minimal Prometheus metric families for the per-call hot path. prom-client re-hashes and
 * re-validates the label set on every `inc` and `observe`, even through a bound child; here a
 * child is a plain object made once per label set, so counting a call is a few additions, and
 * every exposition line's `name{labels}` prefix is rendered once, so a scrape of thousands of
 * series is string concatenation.
 */

type Labels = Readonly<Record<string, string>>

function escapeLabel (value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')
}

function labelText (labels: Labels, extra = ''): string {
  const parts = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`)
  if (extra !== '') parts.push(extra)
  return parts.length === 0 ? '' : `{${parts.join(',')}}`
}

/** Prometheus's number format: integers as such, `+Inf`, else JS's shortest round-trip form. */
function num (value: number): string {
  return value === Infinity ? '+Inf' : value === -Infinity ? '-Inf' : String(value)
}

abstract class Family<Child> {
  readonly #children = new Map<string, Child>()
  readonly #labels = new Map<Child, Labels>()
  constructor (readonly name: string, readonly help: string, readonly type: string) {}

  /** The child of this label set, made on first use and kept: bind it once, use it forever. */
  child (labels: Labels): Child {
    const key = labelText(labels)
    let child = this.#children.get(key)
    if (child === undefined) {
      child = this.create(labels)
      this.#children.set(key, child)
      this.#labels.set(child, { ...labels })
    }
    return child
  }

  /** Every child with its labels, as made: for a reader of values (the console's charts), not the hot path. */
  each (visit: (labels: Labels, child: Child) => void): void {
    for (const [child, labels] of this.#labels) visit(labels, child)
  }

  protected abstract create (labels: Labels): Child
  protected abstract lines (child: Child, out: string[], openMetrics: boolean): void

  /**
   * The exposition of this family: Prometheus text, or with `openMetrics` the OpenMetrics 1.0
   * form (a counter's family name without `_total`, histogram exemplars).
   */
  render (out: string[], openMetrics = false): void {
    const name = openMetrics && this.type === 'counter' ? this.name.replace(/_total$/, '') : this.name
    const help = this.help.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')
    out.push(`# HELP ${name} ${openMetrics ? help.replaceAll('"', '\\"') : help}`, `# TYPE ${name} ${this.type}`)
    for (const child of this.#children.values()) this.lines(child, out, openMetrics)
  }
}

export class CounterChild {
  value = 0
  constructor (readonly prefix: string) {}
  inc (by = 1): void { this.value += by }
}

export class CounterFamily extends Family<CounterChild> {
  constructor (name: string, help: string) { super(name, help, 'counter') }
  protected create (labels: Labels): CounterChild { return new CounterChild(`${this.name}${labelText(labels)} `) }
  protected lines (child: CounterChild, out: string[]): void { out.push(child.prefix + num(child.value)) }
}

export class GaugeChild {
  value = 0
  constructor (readonly prefix: string, readonly read?: () => number) {}
  inc (): void { this.value++ }
  dec (): void { this.value-- }
  set (value: number): void { this.value = value }
}

export class GaugeFamily extends Family<GaugeChild> {
  constructor (name: string, help: string, readonly read?: () => number) { super(name, help, 'gauge') }
  protected create (labels: Labels): GaugeChild { return new GaugeChild(`${this.name}${labelText(labels)} `, this.read) }
  protected lines (child: GaugeChild, out: string[]): void { out.push(child.prefix + num(child.read?.() ?? child.value)) }
}

/** The trace of one observation, shown beside its bucket in OpenMetrics. */
export interface Exemplar {
  readonly traceId: string
  readonly spanId: string
  readonly value: number
  /** Epoch seconds. */
  readonly time: number
}

export class HistogramChild {
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  readonly counts: Float64Array
  sum = 0
  count = 0
  /** The latest exemplar of each bucket; made at the first one (only tracing makes any). */
  exemplars: Array<Exemplar | undefined> | undefined
  constructor (readonly bounds: readonly number[], readonly bucketPrefixes: readonly string[], readonly sumPrefix: string, readonly countPrefix: string) {
    this.counts = new Float64Array(bounds.length + 1)
  }

  /** Count one value; returns its bucket's index. */
  observe (value: number): number {
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    this.counts[i]!++
    this.sum += value
    this.count++
    return i
  }

  /** Count one value and keep its trace as its bucket's exemplar. */
  observeWithExemplar (value: number, traceId: string, spanId: string): void {
    const bucket = this.observe(value)
    this.exemplars ??= new Array<Exemplar | undefined>(this.counts.length)
    this.exemplars[bucket] = { traceId, spanId, value, time: Date.now() / 1000 }
  }
}

export class HistogramFamily extends Family<HistogramChild> {
  constructor (name: string, help: string, readonly bounds: readonly number[]) { super(name, help, 'histogram') }

  protected create (labels: Labels): HistogramChild {
    const bucketPrefixes = [...this.bounds, Infinity].map(le => `${this.name}_bucket${labelText(labels, `le="${num(le)}"`)} `)
    return new HistogramChild(this.bounds, bucketPrefixes, `${this.name}_sum${labelText(labels)} `, `${this.name}_count${labelText(labels)} `)
  }

  protected lines (child: HistogramChild, out: string[], openMetrics: boolean): void {
    let cumulative = 0
    const exemplars = openMetrics ? child.exemplars : undefined
    for (let i = 0; i < child.counts.length; i++) {
      cumulative += child.counts[i]!
      const exemplar = exemplars?.[i]
      out.push(child.bucketPrefixes[i]! + num(cumulative) + (exemplar === undefined ? '' : ` # {trace_id="${exemplar.traceId}",span_id="${exemplar.spanId}"} ${num(exemplar.value)} ${exemplar.time.toFixed(3)}`))
    }
    out.push(child.sumPrefix + num(child.sum), child.countPrefix + num(child.count))
  }
}
