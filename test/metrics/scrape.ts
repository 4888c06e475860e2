import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'

/** One scrape: every sample by a canonical key (`name{a="1",b="2"}`, labels sorted), and the raw text. */
export interface Scrape {
  readonly text: string
  readonly samples: ReadonlyMap<string, number>
}

const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g

/** Canonical series key; label order does not matter. */
function seriesKey (name: string, labels: Record<string, string> = {}): string {
  const pairs = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}="${v}"`)
  return `${name}{${pairs.join(',')}}`
}

export async function scrape (app: FastifyInstance): Promise<Scrape> {
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  expect(response.statusCode).toBe(200)
  const samples = new Map<string, number>()
  for (const line of response.body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not an exposition line: ${line}`)
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL)].map(m => [m[1]!, m[2]!]))
    samples.set(seriesKey(match[1]!, labels), Number(match[3]))
  }
  return { text: response.body, samples }
}

/** The value of one sample, or undefined when the series does not exist. */
export function sample (s: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  return s.samples.get(seriesKey(name, labels))
}

