import type { DeliveryOutcome } from '../approvals/webhooks/deliveries.js'
import { CounterFamily, type CounterChild } from './families.js'

const OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'retried', 'failed', 'dropped']

/**
 * `toolgate_approval_webhooks_total{outcome}`: deliveries of approval events, each URL once per
 * event. Every outcome's series exists from the start at 0; URLs are not labels (they may hold
 * tokens, and they are the operator's, not a closed set).
 */
export class WebhookMetrics {
  readonly family = new CounterFamily('toolgate_approval_webhooks_total', 'Approval webhook deliveries: delivered, retried (one per retry), failed (gave up), dropped (too many under way)')
  readonly #children: ReadonlyMap<DeliveryOutcome, CounterChild> = new Map(OUTCOMES.map(outcome => [outcome, this.family.child({ outcome })]))

  count (outcome: DeliveryOutcome): void {
    this.#children.get(outcome)?.inc()
  }
}
