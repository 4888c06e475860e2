import type { GatewayApp } from 'toolgate'
import type { ToolContext } from 'toolgate'

/**
 * The context every shipped tool receives over HTTP. Annotating one handler parameter with it
 * is enough for `defineTool` to infer the app type; no type arguments are needed.
 */
export type GatewayContext = ToolContext<GatewayApp>

/** True when the calling principal holds `scope`. */
function hasScope (app: GatewayApp, scope: string): boolean {
  return app.principal.scopes.includes(scope)
}

/**
 * Deny the call unless the principal holds `scope`. A plain `Error` thrown by `authorize` is
 * reported by the gateway as `TOOLGATE_DENIED` (403) with this message as the detail: a denial
 * belongs to the gateway's family of errors, not the tool's.
 */
export function denyWithoutScope (app: GatewayApp, scope: string, action: string): void {
  if (!hasScope(app, scope)) throw new Error(`${action} needs the scope "${scope}", which principal "${app.principal.id}" does not hold`)
}
