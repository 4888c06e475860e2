import type { ConsoleAssets } from './assets.js'

export interface ConsoleShell {
  readonly assets: ConsoleAssets
  readonly nonce: string
  readonly oidc: boolean
  readonly version: string
}

/*
 * The console's shell: no data and no credential in it (the script fetches both), no
 * third-party origin, its script and styles linked under the response's nonce. Sections stack
 * on a phone and sit two abreast on a wide screen; native tables, buttons, selects and
 * disclosure widgets keep it keyboard-usable, and a polite live region says what changed.
 */
export function consolePage ({ assets, nonce, oidc, version }: ConsoleShell): string {
  const link = (name: string): string => `<link rel="stylesheet" href="console/assets/${name}" nonce="${nonce}">`
  const script = (name: string): string => `<script src="console/assets/${name}" nonce="${nonce}" defer></script>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console · toolgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
${link(assets.chartStyle.name)}
${link(assets.style.name)}
${script(assets.chartScript.name)}
${script(assets.script.name)}
</head>
<body>
<a class="skip" href="#main">Skip to the console</a>
<header class="top"><h1>toolgate <span class="muted">console</span></h1>
<span class="muted small" id="replica">version ${escape(version)} · this replica</span>
<div id="who" hidden><span>Signed in as <b id="viewer"></b></span> <button id="signout" type="button">Sign out</button></div></header>
<nav id="nav" class="nav" aria-label="Sections" hidden>
<a href="#charts-title">Charts</a><a href="#calls-title">Calls</a><a href="#catalog-title">Catalog</a><a href="#upstreams-title">Upstreams</a><a href="#audit-title">Audit</a><a href="#approvals-title">Approvals</a>
</nav>
<main id="main">
<p id="notice" class="notice" role="status" hidden></p>
<section id="signin" class="card narrow" hidden aria-labelledby="signin-title">
<h2 id="signin-title">Sign in to the console</h2>
<p id="signin-error" class="error" role="alert"></p>
<form id="key-form"><label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required>
<div class="buttons"><button type="submit">Sign in with the key</button></div></form>
${oidc ? '<p>or</p><p><a class="button" id="oidc" href="approvals/ui/login?next=console">Sign in with your organisation</a></p>' : ''}
<p class="muted small">The console needs the scope <code>gateway:read</code>. The key stays in this browser tab only; Sign out forgets it. The console reads: it changes nothing.</p>
</section>
<div id="board" class="board" hidden>
<section class="card wide" aria-labelledby="charts-title">
<h2 id="charts-title">The last minutes <span class="muted small" id="charts-span"></span></h2>
<p id="charts-off" class="muted" hidden>Metrics are off on this gateway (<code>METRICS=false</code>): no charts.</p>
<div class="stats" id="stats"></div>
<div class="charts"><figure><figcaption>Calls per second, by outcome</figcaption><div id="chart-outcomes" class="chart"></div></figure>
<figure><figcaption>Calls per second, by declared effect</figcaption><div id="chart-effects" class="chart"></div></figure>
<figure><figcaption>Latency p99 (ms), busiest tools</figcaption><div id="chart-latency" class="chart"></div></figure>
<figure><figcaption>Failures per second and queue wait p99 (ms)</figcaption><div id="chart-errors" class="chart"></div></figure></div>
</section>
<section class="card wide" aria-labelledby="calls-title">
<h2 id="calls-title">Calls, live <span class="muted small" id="calls-count"></span></h2>
<div class="filters"><label>Search <input id="calls-q" type="search" placeholder="tool or principal"></label>
<label>Effect <select id="calls-effect"><option value="">any</option></select></label>
<label>Outcome <select id="calls-outcome"><option value="">any</option><option value="ok">ok</option><option value="failed">failed</option></select></label>
<label class="check"><input id="calls-pause" type="checkbox"> Pause</label></div>
<div class="scroll calls-box"><table class="calls"><thead><tr><th>Time</th><th>Tool</th><th>Principal</th><th>Outcome</th><th class="num">ms</th><th>Effects</th><th>Via</th></tr></thead><tbody id="calls"></tbody></table></div>
<p id="calls-empty" class="muted">No call yet. Calls appear here as they finish.</p>
</section>
<section class="card wide" aria-labelledby="catalog-title">
<h2 id="catalog-title">Catalog <span class="muted small" id="catalog-count"></span></h2>
<div class="filters"><label>Search <input id="tools-q" type="search" placeholder="id or description"></label>
<label>Effect <select id="tools-effect"><option value="">any</option><option value="none">none declared</option></select></label>
<label>Origin <select id="tools-origin"><option value="">any</option><option value="local">declared here</option><option value="mcp">MCP server</option><option value="openapi">HTTP service</option></select></label>
<label>State <select id="tools-state"><option value="">any</option><option value="serving">serving</option><option value="down">upstream down</option><option value="starting">upstream starting</option></select></label></div>
<div id="tools" class="tools"></div>
</section>
<section class="card" aria-labelledby="upstreams-title">
<h2 id="upstreams-title">Upstreams <span class="muted small">this replica</span></h2>
<p id="upstreams-none" class="muted" hidden>No upstreams file: every tool is declared here.</p>
<div class="scroll"><table><thead><tr><th>Name</th><th>State</th><th>Via</th><th class="num">Tools</th><th class="num">Restarts</th><th class="num">In flight</th><th>Since</th></tr></thead><tbody id="upstreams"></tbody></table></div>
</section>
<section class="card" aria-labelledby="approvals-title">
<h2 id="approvals-title">Approvals <span class="muted small" id="approvals-count"></span></h2>
<ul id="approvals" class="plain"></ul>
<p id="approvals-none" class="muted">Nothing waits for a decision.</p>
<h3>Recent decisions</h3>
<ul id="decisions" class="plain"></ul>
<p><a href="approvals/ui">Open the approvals page</a></p>
</section>
<section class="card wide" aria-labelledby="audit-title">
<h2 id="audit-title">Audit trail <span class="muted small">this replica&apos;s file</span></h2>
<p id="audit-none" class="muted" hidden>This gateway keeps no audit file (<code>AUDIT_LOG</code> unset, or stdout).</p>
<div id="audit-tools"><div class="buttons"><button id="verify" type="button">Verify the chain now</button></div>
<p id="verdict" class="verdict" role="status" hidden></p>
<div class="scroll"><table><thead><tr><th class="num">Seq</th><th>Time</th><th>Event</th><th>Tool</th><th>Principal</th><th>Outcome</th></tr></thead><tbody id="audit"></tbody></table></div></div>
</section>
</div>
</main>
<div id="announce" class="sr-only" aria-live="polite"></div>
</body></html>
`
}

function escape (text: string): string {
  return text.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
}
