/**
 * Who may call: authentication (API keys, JWT bearer tokens), scopes and permission rules.
 * Plain functions over headers and ids, no HTTP framework; the admission plugin adapts them.
 * What the other rooms use; each module has the rest.
 */
export { createAuthenticator, PUBLIC_READER } from './authenticate.js'
export { requireScope } from './scope.js'
export { createPermissionRules } from './rules.js'
export { compileGlob } from './glob.js'
