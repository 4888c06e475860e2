import { describe, expect, it } from 'vitest'
import { SCOPES, type Principal } from '../../../src/core/app-context.js'
import { requireScope } from '../../../src/services/auth/scope.js'
import { GatewayError } from '../../../src/core/errors.js'

const reader: Principal = { id: 'reader', scopes: [SCOPES.read], via: 'api-key' }

describe('requireScope', () => {
  it('refuses a principal without the scope with 403 and an insufficient_scope challenge', () => {
    let thrown: unknown
    try { requireScope(reader, SCOPES.call) } catch (error) { thrown = error }
    expect(thrown).toBeInstanceOf(GatewayError)
    expect(thrown).toMatchObject({
      code: 'TOOLGATE_FORBIDDEN',
      status: 403,
      extensions: { wwwAuthenticate: 'Bearer realm="toolgate", error="insufficient_scope", scope="tools:call"', reason: 'insufficient_scope' },
    })
  })

  it('lets a principal with the scope through', () => {
    expect(() => { requireScope(reader, SCOPES.read) }).not.toThrow()
  })
})
