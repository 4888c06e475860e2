import { publicBaseUrl } from '../../public-url.js'
import type { Redis } from 'ioredis'
import type { ApprovalEvent } from '../../../core/approvals/approvals.js'
import type { Config } from '../../config.js'
import type { WebhookMetrics } from '../../metrics/webhook-metrics.js'
import { webhookMessageOf } from './approval-event.js'
import { redisClaim } from './claims.js'
import { WebhookDeliveries } from './deliveries.js'

export interface ApprovalWebhooks {
  readonly onEvent: (event: ApprovalEvent) => void
  /** Stops deliveries under way; says how many were stopped. */
  readonly close: () => number
}

type WebhookConfig = Pick<Config, 'approvalWebhookUrls' | 'approvalWebhookSecret' | 'approvalWebhookInput' | 'approvalWebhookAttempts' | 'approvalWebhookBackoffMs' | 'approvalWebhookTimeoutMs' | 'approvalsPublicUrl' | 'host' | 'port' | 'redisPrefix'>

/**
 * The approval events' webhook sink (`APPROVAL_WEBHOOK_URL`), or undefined when none is
 * configured. Each event is emitted by one replica already (the one that took the request or
 * the decision, the one whose sweep saw the expiry); with Redis a claim per message and URL
 * holds that even when a replica would hear of it twice.
 */
export function approvalWebhooks (config: WebhookConfig, redis: Redis | undefined, metrics: WebhookMetrics | undefined, prefix = ''): ApprovalWebhooks | undefined {
  const secret = config.approvalWebhookSecret
  if (config.approvalWebhookUrls.length === 0 || secret === undefined) return undefined
  const deliveries = new WebhookDeliveries({
    urls: config.approvalWebhookUrls,
    secret,
    attempts: config.approvalWebhookAttempts,
    backoffMs: config.approvalWebhookBackoffMs,
    timeoutMs: config.approvalWebhookTimeoutMs,
    ...(redis === undefined ? {} : { claim: redisClaim(redis, config.redisPrefix) }),
    ...(metrics === undefined ? {} : { onOutcome: outcome => { metrics.count(outcome) } }),
  })
  const shape = { pageUrl: `${publicBaseUrl(config)}${prefix}/approvals/ui`, includeInput: config.approvalWebhookInput }
  return {
    onEvent: event => {
      const message = webhookMessageOf(event, shape, Date.now())
      if (message !== undefined) deliveries.send(message)
    },
    close: () => deliveries.close(),
  }
}
