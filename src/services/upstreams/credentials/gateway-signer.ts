import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto'
import type { JWK } from 'jose'
import { jose } from '../../auth/jose.js'
import { ConfigError } from '../../config.js'

/*
 * The gateway's own signing key, for upstreams that trust it to say who calls: a short-lived
 * JWT per call (`sub` the caller), its public half published as a JWKS
 * (`GET /.well-known/jwks.json`) for those upstreams to verify with. The key is
 * `UPSTREAM_SIGNING_KEY` (a PKCS#8 PEM: EC P-256 or P-384, RSA, or Ed25519); without it each
 * process makes one at start, which an upstream in front of several replicas cannot verify.
 */

export interface SignedClaims {
  readonly issuer: string
  readonly audience: string
  readonly subject: string
  readonly ttlSeconds: number
  readonly extra: Readonly<Record<string, unknown>>
}

export class GatewaySigner {
  readonly ephemeral: boolean
  readonly #key: KeyObject
  readonly #alg: string
  readonly #kid: string
  readonly #jwk: JWK

  private constructor (key: KeyObject, alg: string, jwk: JWK, kid: string, ephemeral: boolean) {
    this.#key = key
    this.#alg = alg
    this.#jwk = jwk
    this.#kid = kid
    this.ephemeral = ephemeral
  }

  static async create (pem: string | undefined, setting = 'UPSTREAM_SIGNING_KEY'): Promise<GatewaySigner> {
    const { exportJWK, calculateJwkThumbprint } = await jose()
    let key: KeyObject
    if (pem === undefined) {
      key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    } else {
      try {
        key = createPrivateKey(pem)
      } catch (error) {
        throw new ConfigError(`invalid setting "${setting}": not a private key in PEM (${(error as Error).message})`)
      }
    }
    const alg = algorithmOf(key, setting)
    const jwk = await exportJWK(createPublicKey(key))
    const kid = await calculateJwkThumbprint(jwk)
    return new GatewaySigner(key, alg, { ...jwk, kid, alg, use: 'sig' }, kid, pem === undefined)
  }

  /** The public key set an upstream verifies the gateway's tokens with. */
  jwks (): { readonly keys: readonly JWK[] } {
    return { keys: [this.#jwk] }
  }

  async sign (claims: SignedClaims): Promise<string> {
    const { SignJWT } = await jose()
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ ...claims.extra })
      .setProtectedHeader({ alg: this.#alg, kid: this.#kid, typ: 'JWT' })
      .setIssuer(claims.issuer)
      .setAudience(claims.audience)
      .setSubject(claims.subject)
      .setIssuedAt(now)
      .setExpirationTime(now + claims.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.#key)
  }
}

function algorithmOf (key: KeyObject, setting: string): string {
  if (key.type !== 'private') throw new ConfigError(`invalid setting "${setting}": a private key is needed`)
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve
      if (curve === 'prime256v1') return 'ES256'
      if (curve === 'secp384r1') return 'ES384'
      throw new ConfigError(`invalid setting "${setting}": EC keys on P-256 or P-384 only (this one is on ${curve ?? 'an unknown curve'})`)
    }
    case 'rsa': return 'RS256'
    case 'ed25519': return 'EdDSA'
    default: throw new ConfigError(`invalid setting "${setting}": a ${key.asymmetricKeyType ?? 'symmetric'} key; use EC (P-256, P-384), RSA or Ed25519`)
  }
}
