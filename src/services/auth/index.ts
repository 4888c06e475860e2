/**
 * Who may call: authentication (API keys, JWT bearer tokens), scopes and permission rules.
 * Plain functions over headers and ids, no HTTP framework; the admission plugin adapts them.
 */
export { createAuthenticator, ANONYMOUS, PUBLIC_READER, type Authenticate, type AuthConfig } from './authenticate.js'
export { createApiKeyVerifier, hashApiKey, type ApiKey } from './api-keys.js'
export { createJwtVerifier, type JwtConfig } from './jwt.js'
export { JwtVerificationError, JwksUnavailableError, type JwtFailureReason } from './jwt-errors.js'
export { readCredential, type AuthHeaders, type Credential } from './credentials.js'
export { bearerChallenge, REALM, type AuthFailureReason, type BearerErrorCode } from './challenge.js'
export { requireScope } from './scope.js'
export { createPermissionRules, EVERYONE, type PermissionCheck, type Rule } from './rules.js'
export { compileGlob } from './glob.js'
