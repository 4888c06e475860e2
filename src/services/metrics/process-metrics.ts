import { collectDefaultMetrics, Registry, type OpenMetricsContentType } from 'prom-client'

/**
 * prom-client's gauges that end in `_total`. promtool (2.42 and later) refuses a non-counter
 * named `*_total`, and each is only the sum of its by-type sibling (`nodejs_active_handles`
 * and so on), so they are dropped: `sum(nodejs_active_handles)` gives the same number.
 */
const DROPPED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const

let shared: Registry | undefined
let sharedOpenMetrics: Registry<OpenMetricsContentType> | undefined

/**
 * prom-client's process and runtime metrics (CPU, memory, file descriptors, event-loop lag,
 * GC, heap spaces, Node.js version), under their standard names (`process_*`, `nodejs_*`, no
 * prefix) so that stock dashboards and alerts work. They describe the process, not an app, so
 * they are collected once per process however many apps it builds (tests build hundreds): one
 * event-loop monitor and one GC observer, never one per app.
 */
export function processRegistry (format: 'text' | 'openmetrics' = 'text'): { metrics (): Promise<string> } {
  // A registry of its own for OpenMetrics, made at the first such scrape: prom-client renames
  // the counters of a registry it renders as OpenMetrics, for good, so one registry cannot serve both.
  if (format === 'openmetrics') {
    if (sharedOpenMetrics === undefined) {
      sharedOpenMetrics = new Registry<OpenMetricsContentType>()
      sharedOpenMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE)
      collectDefaultMetrics({ register: sharedOpenMetrics })
      for (const name of DROPPED_DEFAULT_METRICS) sharedOpenMetrics.removeSingleMetric(name)
    }
    return sharedOpenMetrics
  }
  if (shared === undefined) {
    shared = new Registry()
    collectDefaultMetrics({ register: shared })
    for (const name of DROPPED_DEFAULT_METRICS) shared.removeSingleMetric(name)
  }
  return shared
}
