import { readFileSync } from 'node:fs'

/*
 * The approvals page's shell: no data and no credential in it (the script fetches both), no
 * third-party asset, one nonce'd style and one nonce'd script. Laid out as cards that stack on
 * a phone; native buttons and form fields keep it keyboard-usable, and a polite live region
 * tells screen readers what arrives and what was decided. The script and the styles are files
 * of their own beside this one (`page/`), linted as browser code, read once and inlined under
 * the response's CSP nonce.
 */

/** The page's script and styles, as files on disk (the build copies them next to the compiled page). */
export interface PageAssets {
  readonly script: string
  readonly style: string
}

export function readPageAssets (): PageAssets {
  const read = (name: string): string => readFileSync(new URL(`./page/${name}`, import.meta.url), 'utf8')
  return { script: read('approvals.js'), style: read('approvals.css') }
}

export interface PageShell {
  readonly assets: PageAssets
  readonly nonce: string
  readonly pollMs: number
  /** Offer "Sign in with your organisation" (OpenID Connect). */
  readonly oidc: boolean
}

export function approvalsPage ({ assets, nonce, pollMs, oidc }: PageShell): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Approvals · toolgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<style nonce="${nonce}">${assets.style}</style></head>
<body data-poll-ms="${pollMs}">
<a class="skip" href="#pending-title">Skip to the requests</a>
<header class="top"><h1>Approvals</h1>
<div id="who" hidden><span>Signed in as <b id="viewer"></b></span> <button id="signout" type="button">Sign out</button></div></header>
<main>
<p id="notice" class="notice" role="status" hidden></p>
<section id="signin" hidden aria-labelledby="signin-title">
<h2 id="signin-title">Sign in to decide</h2>
<p id="signin-error" class="error" role="alert"></p>
<form id="key-form"><label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required>
<div class="buttons"><button type="submit">Sign in with the key</button></div></form>
${oidc ? '<p>or</p><p><a class="button" id="oidc" href="ui/login">Sign in with your organisation</a></p>' : ''}
<p class="muted small">The key stays in this browser tab only and goes with each request this page makes; Sign out forgets it.</p>
</section>
<section id="board" hidden>
<h2 id="pending-title" tabindex="-1">Waiting for a decision <span id="count"></span></h2>
<p id="scope-note" class="muted"></p>
<p class="muted small">A decision is final. The requester then re-sends the call, which runs once. This page updates by itself.</p>
<p id="empty" class="muted" hidden>Nothing waits for a decision.</p>
<div id="pending"></div>
<h2>Recent decisions</h2>
<p id="no-recent" class="muted">None yet.</p>
<ol id="recent"></ol>
</section>
</main>
<div id="announce" class="sr-only" aria-live="polite"></div>
<script nonce="${nonce}">${assets.script}</script>
</body></html>
`
}
