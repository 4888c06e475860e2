import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { parseAllDocuments } from 'yaml'
import { describe, expect, it } from 'vitest'
import { ConfigSchema, ENV_KEYS } from '../../src/services/config.js'

/*
 * deploy/kubernetes/*.yaml, validated offline against the Kubernetes API's JSON schemas (as
 * shipped in the kubernetes-models packages: nothing is fetched), then checked for what running
 * several replicas needs: probes, grace, disruption budget, requests, scraping, shared Redis.
 */

const folder = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url))
type Manifest = { apiVersion: string, kind: string, metadata: { name: string }, [key: string]: unknown }
const manifests: Manifest[] = readdirSync(folder).filter(f => f.endsWith('.yaml')).flatMap(file =>
  parseAllDocuments(readFileSync(folder + file, 'utf8')).map(doc => doc.toJS() as Manifest))

const MODELS: Record<string, new (data: never) => { validate (): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
}

function validate (manifest: Manifest): void {
  const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`]
  if (Model === undefined) throw new Error(`no schema known for ${manifest.apiVersion} ${manifest.kind}`)
  new Model(manifest as never).validate()
}

const find = <T> (kind: string, name: string): T => {
  const found = manifests.find(m => m.kind === kind && m.metadata.name === name)
  if (found === undefined) throw new Error(`no ${kind} ${name}`)
  return found as unknown as T
}

interface Container { env: Array<{ name: string, value?: string }>, readinessProbe: { httpGet: { path: string } }, livenessProbe: { httpGet: { path: string } }, resources: { requests: Record<string, string> } }
interface DeploymentShape { spec: { replicas: number, selector: { matchLabels: Record<string, string> }, template: { metadata: { labels: Record<string, string>, annotations: Record<string, string> }, spec: { terminationGracePeriodSeconds: number, containers: Container[] } } } }
const gateway = find<DeploymentShape>('Deployment', 'toolgate')
const container = gateway.spec.template.spec.containers[0]!
const env = Object.fromEntries(container.env.filter(e => e.value !== undefined).map(e => [e.name, e.value!]))

describe('Kubernetes manifests', () => {
  it('every document validates against the Kubernetes API schema of its kind', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(7)
    for (const manifest of manifests) expect(() => { validate(manifest) }, `${manifest.kind} ${manifest.metadata.name}`).not.toThrow()
  })

  it('the validator does reject a malformed manifest (a test that can fail)', () => {
    const broken = structuredClone(gateway) as unknown as Manifest & DeploymentShape
    ;(broken.spec as { replicas: unknown }).replicas = 'three'
    expect(() => { validate(broken) }).toThrow()
  })

  it('runs several replicas that share one Redis, with probes on /healthz and /readyz and resource requests', () => {
    expect(gateway.spec.replicas).toBeGreaterThanOrEqual(2)
    expect(env.REDIS_URL).toMatch(/^redis:\/\/toolgate-redis:6379$/)
    find('Service', 'toolgate-redis')
    expect(container.livenessProbe.httpGet.path).toBe('/healthz')
    expect(container.readinessProbe.httpGet.path).toBe('/readyz')
    expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory'])
  })

  it('believes forwarded client addresses from the ingress in front of it, never from any peer', () => {
    const { trustProxy } = ConfigSchema.parse({ trustProxy: env.TRUST_PROXY })
    expect(trustProxy).toEqual(expect.arrayContaining(['10.0.0.0/8']))
  })

  it('every environment variable it sets is a setting the gateway knows, with a valid value', () => {
    for (const { name } of container.env) expect([...Object.keys(ENV_KEYS), 'API_KEYS']).toContain(name)
    const settings = Object.fromEntries(Object.entries(env).filter(([name]) => name in ENV_KEYS).map(([name, value]) => [ENV_KEYS[name], value]))
    expect(() => ConfigSchema.parse(settings)).not.toThrow()
  })

  it('gives pods longer to stop than SHUTDOWN_GRACE_MS', () => {
    expect(gateway.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(Number(env.SHUTDOWN_GRACE_MS) + 5_000)
  })

  it('the Service, the PodDisruptionBudget and the ServiceMonitor select the gateway pods', () => {
    const labels = gateway.spec.template.metadata.labels
    const matches = (selector: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v)
    expect(matches(gateway.spec.selector.matchLabels)).toBe(true)
    expect(matches(find<{ spec: { selector: Record<string, string> } }>('Service', 'toolgate').spec.selector)).toBe(true)
    const pdb = find<{ spec: { minAvailable: number, selector: { matchLabels: Record<string, string> } } }>('PodDisruptionBudget', 'toolgate')
    expect(matches(pdb.spec.selector.matchLabels)).toBe(true)
    expect(pdb.spec.minAvailable).toBeLessThan(gateway.spec.replicas) // a drain can still make progress
    expect(matches(find<{ spec: { selector: { matchLabels: Record<string, string> } } }>('ServiceMonitor', 'toolgate').spec.selector.matchLabels)).toBe(true)
  })

  it('is scraped by Prometheus: annotations on the pods point at /metrics on the container port', () => {
    const annotations = gateway.spec.template.metadata.annotations
    expect(annotations['prometheus.io/scrape']).toBe('true')
    expect(annotations['prometheus.io/path']).toBe('/metrics')
    expect(annotations['prometheus.io/port']).toBe(env.PORT)
  })
})
