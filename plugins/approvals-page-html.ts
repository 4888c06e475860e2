import { PAGE_SCRIPT } from './approvals-page-script.js'

/*
 * The approvals page's shell: no data and no credential in it (the script fetches both), no
 * third-party asset, one nonce'd style and one nonce'd script. Laid out as cards that stack on
 * a phone; native buttons and form fields keep it keyboard-usable, and a polite live region
 * tells screen readers what arrives and what was decided.
 */
const STYLE = `
:root{color-scheme:light dark;--fg:#1d1f23;--muted:#5d6470;--bg:#f5f6f8;--card:#fff;--line:#d9dce1;--accent:#1a56db;--ok:#116b3a;--okbg:#dcf3e5;--bad:#a3201a;--badbg:#fde4e2;--warn:#7a4a00;--warnbg:#fff0d1}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#a3a9b3;--bg:#15171a;--card:#1f2226;--line:#343840;--accent:#8ab4ff;--ok:#7fd6a2;--okbg:#173a27;--bad:#ff9d96;--badbg:#43201d;--warn:#ffd27a;--warnbg:#3d2e10}}
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;background:var(--card);border-bottom:1px solid var(--line)}
header.top h1{font-size:1.25rem;margin:0}
main{max-width:60rem;margin:0 auto;padding:1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}h3{font-size:1.05rem;margin:0}h4{font-size:.9rem;margin:.75rem 0 .25rem;color:var(--muted)}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;margin:0 0 1rem}
.card:focus{outline:3px solid var(--accent);outline-offset:2px}
.kind{font-weight:400;color:var(--muted);font-size:.9rem}
.badges{margin:.4rem 0}.badge{display:inline-block;border-radius:999px;padding:0 .6rem;margin:0 .3rem .3rem 0;font-size:.85rem;border:1px solid currentColor}
.effect{color:var(--bad);background:var(--badbg)}.none{color:var(--muted)}
.desc{margin:.25rem 0 .5rem}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.25rem 1rem;margin:.5rem 0}
.facts div{min-width:0}.facts dt{font-size:.8rem;color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.5rem;font-size:.85rem;max-height:24rem;overflow:auto}
details summary{cursor:pointer;color:var(--accent);padding:.25rem 0}
.muted{color:var(--muted)}.small{font-size:.8rem}.digest{overflow-wrap:anywhere;margin:.25rem 0 0}
.decide{display:grid;gap:.4rem;margin-top:.75rem}.decide label{font-size:.9rem}
input{font:inherit;padding:.55rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg);width:100%}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem}
button,a.button{font:inherit;font-weight:600;min-height:44px;padding:.5rem 1.1rem;border-radius:6px;border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer;text-decoration:none;display:inline-flex;align-items:center}
button.approve{background:var(--ok);border-color:var(--ok);color:var(--card)}button.reject{color:var(--bad);border-color:var(--bad)}
button:disabled{opacity:.5;cursor:default}
button:focus-visible,a:focus-visible,input:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.status{margin:.5rem 0 0;font-weight:600}.status:empty{display:none}.approved{color:var(--ok)}.rejected,.error{color:var(--bad)}
.notice{background:var(--warnbg);color:var(--warn);padding:.5rem .75rem;border-radius:6px}
.pill{font-size:.8rem;border-radius:999px;padding:0 .5rem;border:1px solid currentColor}.pill.approved{background:var(--okbg)}.pill.rejected{background:var(--badbg)}.pill.expired{color:var(--muted)}
#recent{list-style:none;padding:0;margin:0}.decision{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem;margin:0 0 .5rem}.decision p{margin:0}
blockquote{margin:.3rem 0 0;padding-left:.6rem;border-left:3px solid var(--line)}
#signin form{display:grid;gap:.5rem;max-width:26rem}
#who{display:flex;gap:.75rem;align-items:center;flex-wrap:wrap}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem}
@media (max-width:30rem){main{padding:.5rem}.card{padding:.75rem}.buttons button{flex:1}}
`

export interface PageShell {
  readonly nonce: string
  readonly pollMs: number
  /** Offer "Sign in with your organisation" (OpenID Connect). */
  readonly oidc: boolean
}

export function approvalsPage ({ nonce, pollMs, oidc }: PageShell): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Approvals · toolgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<style nonce="${nonce}">${STYLE}</style></head>
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
<script nonce="${nonce}">${PAGE_SCRIPT}</script>
</body></html>
`
}
