import { expect } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'

/** Every non-2xx: problem+json, `status` equal to the HTTP status, a code, and no stack. */
export function expectProblem (response: LightMyRequestResponse, status: number, code?: string): Record<string, unknown> {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(response.headers['x-request-id']).toBeTruthy()
  const body = response.json<Record<string, unknown>>()
  expect(body).toMatchObject({ status, type: expect.stringMatching(/^urn:toolgate:error:/), title: expect.any(String), detail: expect.any(String), code: expect.any(String) })
  if (code !== undefined) expect(body.code).toBe(code)
  expect(response.body).not.toMatch(/\bat .+:\d+:\d+/) // no stack frames
  expect(body).not.toHaveProperty('stack')
  return body
}
