import type * as JoseModule from 'jose'

type Jose = typeof JoseModule

let loading: Promise<Jose> | undefined

/**
 * jose, imported on first use: its 46 modules allocate about 3.5 MiB at start-up, which a
 * gateway that verifies no JWT should not pay. `createJwtVerifier` asks for it as it is built,
 * so a gateway that does verify JWTs has it loaded before its first request; every caller
 * shares one promise.
 */
export function jose (): Promise<Jose> {
  return loading ??= import('jose')
}
