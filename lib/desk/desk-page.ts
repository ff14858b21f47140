// The desk's HTML: a shell naming its title, script and style by relative addresses, no inline script or style.
import type { DeskAssets } from './desk-assets.js'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escaped = (text: string) => text.replace(/[&<>"']/g, character => ESCAPES[character]!)

/** The page at `{prefix}{desk.path}`; `below` is the path's last segment, under which its assets are served. */
export function deskHtml (title: string, below: string, assets: DeskAssets): string {
  const at = (name: string) => `${escaped(below)}/${escaped(name)}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="fastify-order-desk" content="${at('config.json')}">
<title>${escaped(title)}</title>
<link rel="stylesheet" href="${at(assets.style.name)}">
<script type="module" src="${at(assets.script.name)}"></script>
</head>
<body>
<header><h1 id="desk-title">${escaped(title)}</h1></header>
<main id="desk"><p>Loading…</p></main>
<noscript><p>The desk needs JavaScript.</p></noscript>
</body>
</html>
`
}

// No inline script or style, nothing from another host; the page calls the plugin's routes on its own origin.
export const DESK_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'self'"
].join('; ')
