import { createPublicKey, type KeyObject } from 'node:crypto'
import type { CryptoKey, JWTVerifyGetKey } from 'jose'
import { ConfigError, type Config } from '../config.js'
import { jose } from './jose.js'
import { JwksUnavailableError } from './jwt-errors.js'

export type JwtConfig = NonNullable<Config['jwt']>
type JwtAlgorithm = JwtConfig['algorithms'][number]

/** What `jwtVerify` needs: the algorithms it may accept and how to find the key for a token. */
export interface JwtKeySource {
  readonly algorithms: readonly JwtAlgorithm[]
  readonly getKey: JWTVerifyGetKey
}

const isHmac = (alg: string): boolean => alg.startsWith('HS')

/**
 * Pick the key source and narrow the algorithms to those the key can serve. The key decides,
 * never the token: a public key or a JWKS is never used as an HMAC secret (the classic
 * algorithm-confusion attack), and a secret is never offered to an asymmetric algorithm.
 * A key that fits none of the configured algorithms stops start-up.
 */
export function jwtKeySource (jwt: JwtConfig): JwtKeySource {
  if (jwt.jwksUrl !== undefined) return remoteSource(jwt.jwksUrl, jwt.algorithms)
  if (jwt.key === undefined) throw new ConfigError('invalid setting "jwt": exactly one of jwksUrl or key')
  const pem = jwt.key.replace(/\\n/g, '\n')
  return pem.trimStart().startsWith('-----BEGIN') ? publicKeySource(pem, jwt.algorithms) : secretSource(jwt.key, jwt.algorithms)
}

function remoteSource (url: string, configured: readonly JwtAlgorithm[]): JwtKeySource {
  const algorithms = narrow(configured, alg => !isHmac(alg), 'a JWKS serves public keys; HS* algorithms need a shared secret in jwt.key')
  const where = new URL(url)
  // One key set (one cache, one fetch at a time), made once jose is loaded: set synchronously
  // after the await, so concurrent first calls share it.
  let jwks: JWTVerifyGetKey | undefined
  const getKey: JWTVerifyGetKey = async (header, token) => {
    const { createRemoteJWKSet, errors } = await jose()
    jwks ??= createRemoteJWKSet(where)
    try {
      return await jwks(header, token)
    } catch (error) {
      // No (or several) keys for this token's kid/alg is the token's fault; anything else is the key server's.
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error
      throw new JwksUnavailableError({ cause: error })
    }
  }
  return { algorithms, getKey }
}

function secretSource (secret: string, configured: readonly JwtAlgorithm[]): JwtKeySource {
  const algorithms = narrow(configured, isHmac, 'a shared secret serves only HS256, HS384 and HS512; for other algorithms set jwt.key to a PEM public key')
  const key = new TextEncoder().encode(secret)
  return { algorithms, getKey: async () => key }
}

function publicKeySource (pem: string, configured: readonly JwtAlgorithm[]): JwtKeySource {
  let keyObject: KeyObject
  try {
    keyObject = createPublicKey(pem)
  } catch (error) {
    throw new ConfigError(`invalid setting "jwt.key": not a PEM public key (${(error as Error).message})`)
  }
  const fits = algorithmsFor(keyObject)
  const algorithms = narrow(configured, alg => fits.includes(alg), `a ${keyDescription(keyObject)} key serves only ${fits.join(', ') || 'no JWS algorithm'}`)
  const spki = keyObject.export({ type: 'spki', format: 'pem' }).toString()
  // Web Crypto keys are bound to one algorithm, so import once per algorithm actually used.
  const imported = new Map<string, Promise<CryptoKey>>()
  const getKey: JWTVerifyGetKey = async header => {
    const alg = header.alg ?? ''
    let key = imported.get(alg)
    if (key === undefined) imported.set(alg, key = jose().then(({ importSPKI }) => importSPKI(spki, alg)))
    return await key
  }
  return { algorithms, getKey }
}

function narrow (configured: readonly JwtAlgorithm[], keep: (alg: JwtAlgorithm) => boolean, why: string): JwtAlgorithm[] {
  const algorithms = configured.filter(keep)
  if (algorithms.length === 0) throw new ConfigError(`invalid setting "jwt.algorithms": none of ${configured.join(', ')} fits the key: ${why}`)
  return algorithms
}

const CURVE_ALGORITHMS: Record<string, JwtAlgorithm> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }

function algorithmsFor (key: KeyObject): JwtAlgorithm[] {
  switch (key.asymmetricKeyType) {
    case 'rsa': return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
    case 'rsa-pss': return ['PS256', 'PS384', 'PS512']
    case 'ed25519': return ['EdDSA']
    case 'ec': {
      const alg = CURVE_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? '']
      return alg === undefined ? [] : [alg]
    }
    default: return []
  }
}

function keyDescription (key: KeyObject): string {
  const curve = key.asymmetricKeyDetails?.namedCurve
  return curve === undefined ? String(key.asymmetricKeyType) : `${String(key.asymmetricKeyType)} ${curve}`
}
