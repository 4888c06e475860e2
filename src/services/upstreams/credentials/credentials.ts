import type { Redis } from 'ioredis'
import { ConfigError } from '../../config.js'
import { CounterFamily, GaugeFamily } from '../../metrics/families.js'
import { memoryLinkCounts, redisLinkCounts, type LinkCounts } from './link-counts.js'
import { createRedisClient, whenReady } from '../../redis/client.js'
import { sharedTokens } from '../../redis/shared-tokens.js'
import type { UpstreamsFile } from '../file.js'
import type { UpstreamLog } from '../status.js'
import { credentialOf, type UpstreamCredential } from './credential.js'
import type { AuthConfig } from './declaration.js'
import { GatewaySigner } from './gateway-signer.js'
import { Sealer } from './sealer.js'
import { SealedKeyedStore } from './sealed-store.js'
import { LinkCredential } from './link-credential.js'
import { MemoryKeyedStore, RedisKeyedStore, type KeyedStore } from '../../keyed-store.js'
import type { SharedTokens } from './token-cache.js'

/*
 * Every upstream's credential, made once at start-up from the upstreams file: the OAuth
 * clients (their tokens shared by the replicas on Redis, sealed), the gateway's signing key,
 * the metrics. Start-up checks each one and refuses a wrong one naming the upstream and field.
 */

export interface CredentialSettings {
  readonly log: UpstreamLog
  /** Shared tokens, one fetch at a time across replicas: with `credentialsKey` to seal them. */
  readonly redisUrl?: string
  readonly redisPrefix?: string
  readonly credentialsKey?: string
  readonly signingKey?: string
  /** Where people reach the gateway (`APPROVALS_PUBLIC_URL`, or its listen address): the connections page and its callback are under it. */
  readonly publicUrl?: string
}

export class Credentials {
  readonly #byUpstream: ReadonlyMap<string, UpstreamCredential>
  readonly #signer: GatewaySigner | undefined
  readonly #redis: Redis | undefined
  readonly #where: ReadonlyMap<string, string>
  readonly families: ReadonlyArray<CounterFamily | GaugeFamily>
  readonly #linkCounts: LinkCounts | undefined

  private constructor (byUpstream: ReadonlyMap<string, UpstreamCredential>, where: ReadonlyMap<string, string>, signer: GatewaySigner | undefined, redis: Redis | undefined, families: ReadonlyArray<CounterFamily | GaugeFamily>, linkCounts: LinkCounts | undefined) {
    this.#linkCounts = linkCounts
    this.#byUpstream = byUpstream
    this.#where = where
    this.#signer = signer
    this.#redis = redis
    this.families = families
  }

  static async open (file: UpstreamsFile, settings: CredentialSettings): Promise<Credentials> {
    const declared = [
      ...file.servers.flatMap(server => {
        const auth = server.transport === 'stdio' ? server.perPerson?.auth : server.auth
        return auth !== undefined ? [[server.name, auth, `upstreams file ${file.path}: mcpServers.${server.name}.auth`] as const] : []
      }),
      ...file.services.flatMap(service => service.auth !== undefined ? [[service.name, service.auth, `upstreams file ${file.path}: openapi.${service.name}.auth`] as const] : []),
    ] satisfies ReadonlyArray<readonly [string, AuthConfig, string]>
    const fetched = new CounterFamily('toolgate_upstream_tokens_fetched_total', 'Tokens the gateway obtained at a token endpoint for an upstream, by upstream and mode')
    const failures = new CounterFamily('toolgate_upstream_credential_failures_total', 'Calls that got no credential for their upstream, or whose credential the upstream refused, by upstream, mode and reason')
    const oauth = declared.some(([, auth]) => auth.type !== 'identity')
    let shared: SharedTokens | undefined
    let redis: Redis | undefined
    let sealer: Sealer | undefined
    if (oauth && settings.redisUrl !== undefined) {
      if (settings.credentialsKey === undefined) {
        throw new ConfigError(`${declared.find(([, auth]) => auth.type !== 'identity')![2]}: with REDIS_URL, the replicas share upstream tokens in Redis, sealed: set CREDENTIALS_KEY (32 random bytes in base64, \`openssl rand -base64 32\`)`)
      }
      sealer = Sealer.fromSetting(settings.credentialsKey)
      redis = createRedisClient(settings.redisUrl, {
        down: error => { settings.log.warn({ err: error }, 'redis unreachable: each replica fetches its own upstream tokens until it is back') },
      }, { commandTimeout: 1_000 })
      shared = sharedTokens(redis, settings.redisPrefix ?? 'toolgate:', sealer)
      // Its commands fail at once while it connects: wait a little, so the first connections share their tokens too.
      if (!await whenReady(redis, 2_000)) settings.log.warn({}, 'redis not reachable at start-up: each replica fetches its own upstream tokens until it is')
    }
    const needsSigner = declared.some(([, auth]) => auth.type === 'identity' && auth.jwt !== undefined)
    const signer = needsSigner ? await GatewaySigner.create(settings.signingKey) : undefined
    if (signer?.ephemeral === true) settings.log.warn({}, 'UPSTREAM_SIGNING_KEY is not set: this process signs upstream identity tokens with a key of its own; set it when more than one replica runs')
    const linking = declared.some(([, auth]) => auth.type === 'link')
    const links: KeyedStore | undefined = !linking ? undefined : redis === undefined ? new MemoryKeyedStore(100_000) : new SealedKeyedStore(new RedisKeyedStore(redis, `${settings.redisPrefix ?? 'toolgate:'}links:`), sealer!)
    const flows: KeyedStore | undefined = !linking ? undefined : redis === undefined ? new MemoryKeyedStore() : new SealedKeyedStore(new RedisKeyedStore(redis, `${settings.redisPrefix ?? 'toolgate:'}link-flows:`), sealer!)
    if (linking && redis === undefined) settings.log.warn({}, 'people\'s links to upstream accounts are kept in this process: they are lost on restart (set REDIS_URL and CREDENTIALS_KEY to keep them)')
    const linkGauge = new GaugeFamily('toolgate_upstream_links', 'People\'s links to upstream accounts, by upstream and state (linked, broken)')
    const linkUpstreams = declared.filter(([, auth]) => auth.type === 'link').map(([upstream]) => upstream)
    const gauge = (): void => {
      for (const upstream of linkUpstreams) for (const state of ['linked', 'broken'] as const) linkGauge.child({ upstream, state }).set(linkCounts!.get(upstream, state))
    }
    const linkCounts: LinkCounts | undefined = !linking ? undefined : redis === undefined ? memoryLinkCounts(gauge) : redisLinkCounts(redis, `${settings.redisPrefix ?? 'toolgate:'}link-states`, gauge)
    if (linking) gauge()
    const linkEvents = new CounterFamily('toolgate_upstream_link_events_total', 'What happened to people\'s links to upstream accounts, by upstream and event (linked, unlinked, refreshed, broken)')
    const serverUrls = new Map(file.servers.flatMap(server => server.transport === 'stdio' ? [] : [[server.name, server.url] as const]))
    const byUpstream = new Map<string, UpstreamCredential>()
    const where = new Map<string, string>()
    for (const [upstream, auth, at] of declared) {
      const labels = { upstream, mode: auth.type }
      const fetchedChild = fetched.child(labels)
      const deps = {
        upstream,
        ...(shared === undefined ? {} : { shared }),
        ...(signer === undefined ? {} : { signer }),
        events: {
          fetched: () => { fetchedChild.inc() },
          failed: (reason: string) => { failures.child({ ...labels, reason }).inc() },
          log: (level: 'warn' | 'error', object: object, message: string) => { settings.log[level](object, message) },
        },
      }
      byUpstream.set(upstream, auth.type !== 'link'
        ? credentialOf(auth, deps)
        : new LinkCredential(auth.client, {
          ...deps,
          links: links!,
          flows: flows!,
          connectionsUrl: `${settings.publicUrl ?? ''}/connections/ui`,
          callbackUrl: `${settings.publicUrl ?? ''}/connections/callback`,
          ...(serverUrls.has(upstream) ? { serverUrl: serverUrls.get(upstream)! } : {}),
          linkEvent: event => { linkEvents.child({ upstream, event }).inc() },
          linkState: (from, to) => { linkCounts!.change(upstream, from, to) },
        }, shared))
      where.set(upstream, at)
    }
    return new Credentials(byUpstream, where, signer, redis, [fetched, failures, ...linking ? [linkEvents, linkGauge] : []], linkCounts)
  }

  /** The credential of `upstream`; undefined: its static `headers` alone. */
  of (upstream: string): UpstreamCredential | undefined {
    return this.#byUpstream.get(upstream)
  }

  /** The upstreams a person links an account of their own to (the connections page's). */
  links (): readonly LinkCredential[] {
    return [...this.#byUpstream.values()].filter((credential): credential is LinkCredential => credential instanceof LinkCredential)
  }

  /** The gateway's public signing keys, when an upstream takes its signed identity. */
  jwks (): ReturnType<GatewaySigner['jwks']> | undefined {
    return this.#signer?.jwks()
  }

  /**
   * Ask every OAuth issuer for its metadata: one that answers something unusable stops the
   * start, naming the upstream's field; one that cannot be reached now is logged and asked again
   * at the first call.
   */
  async check (log: UpstreamLog): Promise<void> {
    await Promise.all([...this.#byUpstream].map(async ([upstream, credential]) => {
      const failure = await credential.check()
      if (failure === undefined) return
      const at = this.#where.get(upstream)!
      if (failure.kind === 'refused') throw new ConfigError(`${at}: ${failure.message}`)
      log.warn({ upstream, reason: failure.message }, `${at}: the issuer cannot be reached now; the first call asks again`)
    }))
  }

  close (): void {
    this.#linkCounts?.close()
    this.#redis?.disconnect()
  }
}
