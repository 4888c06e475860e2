import { UpstreamError } from '../../../core/errors.js'
import { toJsonPointer } from '../../../core/input-issues.js'
import { isObject } from './document.js'
import type { OperationPlan } from './operation.js'

/*
 * The HTTP request of one call, built only from the service's base URL and the operation's
 * declared parameters. Path values are percent-encoded inside their segment (`/`, `?`, `#`,
 * `%` and every other reserved character included) and a segment is never empty or a dot
 * segment; query names and values are encoded; header and cookie values hold no line break.
 * The host, scheme and port are the base URL's: no input reaches them. The path is sent as
 * built (no URL parser normalises it afterwards).
 */

export interface BuiltRequest {
  readonly method: string
  /** Path and query, as sent on the request line. */
  readonly target: string
  /** The parameters' headers only: the service's own and the gateway's are added when sending. */
  readonly headers: Readonly<Record<string, string>>
  readonly body?: { readonly contentType: string, readonly bytes: Buffer }
}

/**
 * Every character but RFC 3986's unreserved ones, encoded (encodeURIComponent leaves `!'()*`).
 * @internal exported for its tests, not for the package
 */
export function encodeStrict (text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** `input` (validated against the plan's input schema) as the request; `basePath` is the base URL's path. */
export function buildRequest (plan: OperationPlan, basePath: string, input: Readonly<Record<string, unknown>>): BuiltRequest {
  const values = new Map<string, unknown>()
  for (const { property, parameter } of plan.parameters) {
    const value = input[property]
    if (value === undefined) continue
    // A lone surrogate has no UTF-8 form: it cannot be percent-encoded, nor sent in a header.
    if (!wellFormed(value)) throw invalid(property, 'holds a lone UTF-16 surrogate, which has no UTF-8 form')
    values.set(parameter.in + '\0' + parameter.name, value)
  }
  let path = plan.path
  const query: string[] = []
  const headers: Record<string, string> = {}
  const cookies: string[] = []
  for (const { property, parameter } of plan.parameters) {
    const value = values.get(parameter.in + '\0' + parameter.name)
    if (value === undefined || value === null) continue
    const explode = parameter.explode ?? (parameter.style === undefined || parameter.style === 'form')
    if (parameter.contentType !== undefined) {
      const text = JSON.stringify(value)
      if (parameter.in === 'path') path = path.replaceAll(`{${parameter.name}}`, segment(property, text))
      else if (parameter.in === 'query') query.push(`${encodeStrict(parameter.name)}=${encodeStrict(text)}`)
      else if (parameter.in === 'header') headers[parameter.name] = headerValue(property, text)
      else cookies.push(`${parameter.name}=${encodeStrict(text)}`)
      continue
    }
    switch (parameter.in) {
      case 'path':
        path = path.replaceAll(`{${parameter.name}}`, pathValue(property, parameter.name, value, parameter.style ?? 'simple', parameter.explode ?? false))
        break
      case 'query':
        query.push(...queryPairs(parameter.name, value, parameter.style ?? 'form', explode))
        break
      case 'header':
        headers[parameter.name] = headerValue(property, simple(value, parameter.explode ?? false))
        break
      case 'cookie':
        cookies.push(`${parameter.name}=${encodeStrict(headerValue(property, simple(value, false)))}`)
        break
    }
  }
  if (cookies.length > 0) headers.cookie = cookies.join('; ')
  const base = basePath.endsWith('/') ? basePath.slice(0, -1) : basePath
  const target = `${base}${path}${query.length === 0 ? '' : '?' + query.join('&')}`
  const body = plan.body === undefined || input.body === undefined
    ? undefined
    : { contentType: plan.body.contentType, bytes: Buffer.from(plan.body.form ? formOf(input.body) : JSON.stringify(input.body)) }
  return { method: plan.method, target, headers, ...(body === undefined ? {} : { body }) }
}

/** One path value: within its segment whatever it holds, and never a segment that moves the path. */
function segment (property: string, text: string): string {
  if (text === '' || text === '.' || text === '..') throw invalid(property, 'a path parameter cannot be empty, "." or ".."')
  return encodeStrict(text)
}

function pathValue (property: string, name: string, value: unknown, style: string, explode: boolean): string {
  const prefix = style === 'label' ? '.' : style === 'matrix' ? `;${encodeStrict(name)}=` : ''
  if (Array.isArray(value)) {
    const items = value.map(item => segment(property, scalar(item)))
    if (style === 'matrix' && explode) return items.map(item => `;${encodeStrict(name)}=${item}`).join('')
    return prefix + items.join(style === 'label' && explode ? '.' : ',')
  }
  if (isObject(value)) {
    const entries = Object.entries(value).map(([k, v]) => [encodeStrict(k), segment(property, scalar(v))] as const)
    if (explode) return (style === 'matrix' ? '' : prefix) + entries.map(([k, v]) => (style === 'matrix' ? `;${k}=${v}` : `${k}=${v}`)).join(style === 'label' ? '.' : ',')
    return prefix + entries.flat().join(',')
  }
  return prefix + segment(property, scalar(value))
}

function queryPairs (name: string, value: unknown, style: string, explode: boolean): string[] {
  const key = encodeStrict(name)
  if (Array.isArray(value)) {
    const items = value.map(item => encodeStrict(scalar(item)))
    if (items.length === 0) return []
    if (style === 'form' && explode) return items.map(item => `${key}=${item}`)
    return [`${key}=${items.join(style === 'spaceDelimited' ? '%20' : style === 'pipeDelimited' ? '%7C' : ',')}`]
  }
  if (isObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined && v !== null)
    if (style === 'deepObject') return entries.map(([k, v]) => `${key}%5B${encodeStrict(k)}%5D=${encodeStrict(scalar(v))}`)
    if (explode) return entries.map(([k, v]) => `${encodeStrict(k)}=${encodeStrict(scalar(v))}`)
    return [`${key}=${entries.map(([k, v]) => `${encodeStrict(k)},${encodeStrict(scalar(v))}`).join(',')}`]
  }
  return [`${key}=${encodeStrict(scalar(value))}`]
}

function simple (value: unknown, explode: boolean): string {
  if (Array.isArray(value)) return value.map(scalar).join(',')
  if (isObject(value)) return Object.entries(value).map(([k, v]) => (explode ? `${k}=${scalar(v)}` : `${k},${scalar(v)}`)).join(',')
  return scalar(value)
}

/** Visible ASCII, spaces, tabs and Latin-1 only: nothing that could end the header or start another. */
function headerValue (property: string, text: string): string {
  if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(text)) throw invalid(property, 'a header or cookie value cannot hold line breaks, NUL or characters beyond Latin-1')
  return text
}

function scalar (value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value === null || value === undefined) return ''
  return JSON.stringify(value)
}

function formOf (body: unknown): string {
  const form = new URLSearchParams()
  if (isObject(body)) {
    for (const [key, value] of Object.entries(body)) {
      if (value === undefined || value === null) continue
      if (Array.isArray(value)) for (const item of value) form.append(key, scalar(item))
      else form.append(key, scalar(value))
    }
  }
  return form.toString()
}

/** With the `u` flag a pair is one code point: only a lone surrogate is in category Cs. */
const LONE_SURROGATE = /\p{Cs}/u

function wellFormed (value: unknown): boolean {
  if (typeof value === 'string') return !LONE_SURROGATE.test(value)
  if (Array.isArray(value)) return value.every(wellFormed)
  if (isObject(value)) return Object.entries(value).every(([key, v]) => !LONE_SURROGATE.test(key) && wellFormed(v))
  return true
}

function invalid (property: string, message: string): UpstreamError {
  return new UpstreamError('TOOLGATE_INVALID_INPUT', message, { errors: [{ pointer: toJsonPointer([property]), message, code: 'invalid_parameter' }] })
}
