import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import { MemoryKeyedStore, RedisKeyedStore } from '../keyed-store.js'
import { OidcSignIn } from './sign-in/oidc-sign-in.js'
import { WebhookMetrics } from '../metrics/webhook-metrics.js'
import { approvalWebhooks, type ApprovalWebhooks } from './webhooks/approval-webhooks.js'
import { MemoryRecentDecisions, RedisRecentDecisions, type RecentDecisions } from './recent-decisions.js'

export interface ApprovalPeopleServices {
  /** The page's "recent decisions", shared by replicas with Redis. */
  readonly recent: RecentDecisions
  /** The page's OpenID Connect sign-in, when `APPROVALS_OIDC_CLIENT_ID` is set. */
  readonly signIn?: OidcSignIn
  /** `APPROVAL_WEBHOOK_URL`'s deliveries, when set. */
  readonly webhooks?: ApprovalWebhooks
  /** Their counters, when metrics are on and webhooks configured. */
  readonly webhookMetrics?: WebhookMetrics
}

/**
 * What lets people take part in approvals, from configuration: where recent decisions and
 * sign-in sessions are kept (Redis when the gateway has one, so any replica serves any
 * browser), the sign-in, and the webhooks that tell someone a decision is waiting.
 */
export function approvalPeopleServices (config: Config, redis: Redis | undefined, prefix: string): ApprovalPeopleServices {
  const recent = redis === undefined ? new MemoryRecentDecisions() : new RedisRecentDecisions(redis, config.redisPrefix)
  const webhookMetrics = config.metrics && config.approvalWebhookUrls.length > 0 ? new WebhookMetrics() : undefined
  const webhooks = approvalWebhooks(config, redis, webhookMetrics, prefix)
  const clientId = config.approvalsOidcClientId
  const signIn = clientId === undefined || config.jwt === undefined
    ? undefined
    : new OidcSignIn({
      issuer: config.jwt.issuer,
      clientId,
      ...(config.approvalsOidcClientSecret === undefined ? {} : { clientSecret: config.approvalsOidcClientSecret }),
      scope: config.approvalsOidcScope,
      sessionTtlMs: config.approvalsSessionTtlMs,
      store: redis === undefined ? new MemoryKeyedStore() : new RedisKeyedStore(redis, `${config.redisPrefix}approvals:signin:`),
    })
  return { recent, ...(signIn === undefined ? {} : { signIn }), ...(webhooks === undefined ? {} : { webhooks }), ...(webhookMetrics === undefined ? {} : { webhookMetrics }) }
}
