import type { Sampler } from '@opentelemetry/sdk-trace-node'
import { ConfigError } from '../config.js'
import { AlwaysOff, AlwaysOn, ParentBased, TraceIdRatio } from './samplers.js'

/**
 * `OTEL_TRACES_SAMPLER` (and `OTEL_TRACES_SAMPLER_ARG` for the ratio samplers), read from the
 * given environment rather than the SDK's own read of `process.env`, so a gateway built in a
 * test or embedded in a host gets exactly the settings it was given. Default: parentbased_always_on.
 * The samplers are toolgate's own, deciding as the SDK's do (`samplers.ts`).
 */
export function samplerFromEnv (env: NodeJS.ProcessEnv): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on'
  switch (name) {
    case 'always_on': return new AlwaysOn()
    case 'always_off': return new AlwaysOff()
    case 'traceidratio': return new TraceIdRatio(ratio(env))
    case 'parentbased_always_on': return new ParentBased(new AlwaysOn())
    case 'parentbased_always_off': return new ParentBased(new AlwaysOff())
    case 'parentbased_traceidratio': return new ParentBased(new TraceIdRatio(ratio(env)))
    default: throw new ConfigError(`invalid setting "OTEL_TRACES_SAMPLER": "${name}" is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio`)
  }
}

function ratio (env: NodeJS.ProcessEnv): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim()
  if (raw === undefined || raw === '') return 1
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(`invalid setting "OTEL_TRACES_SAMPLER_ARG": "${raw}" is not a number from 0 to 1`)
  return value
}
