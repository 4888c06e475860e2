/*
 * The connections page's shell: no data and no credential in it (the script fetches both),
 * one nonce'd style and one nonce'd script, signed in as on the approvals page.
 */
export function connectionsPage (assets: { readonly script: string, readonly style: string }, nonce: string, oidc: boolean): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Connections · toolgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<style nonce="${nonce}">${assets.style}</style></head>
<body>
<header class="top"><h1>Connections</h1>
<div id="who" hidden><span>Signed in as <b id="viewer"></b></span> <button id="signout" type="button">Sign out</button></div></header>
<main>
<p id="notice" class="notice" role="status" hidden></p>
<section id="signin" hidden aria-labelledby="signin-title">
<h2 id="signin-title">Sign in to see your connections</h2>
<form id="key-form"><label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required>
<div class="buttons"><button type="submit">Sign in with the key</button></div></form>
${oidc ? '<p>or</p><p><a class="button" id="oidc" href="../approvals/ui/login?next=connections">Sign in with your organisation</a></p>' : ''}
<p class="muted small">Signed in on the approvals page, you are signed in here too.</p>
</section>
<section id="board" hidden>
<p class="muted">These services are reached with your own account there. Link each once; the gateway keeps the link (never shown) and uses it only for your calls.</p>
<p id="empty" class="muted" hidden>No service here takes a linked account.</p>
<ul id="connections" class="connections"></ul>
</section>
</main>
<script nonce="${nonce}">${assets.script}</script>
</body></html>
`
}
