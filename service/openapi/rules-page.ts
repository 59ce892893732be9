/**
 * The rules page at /docs/rules: the route table generated from the same route
 * registry as /openapi.json (so they agree), plus the rules every endpoint
 * shares (errors, limits, caching, receipts, pricing). The reference itself,
 * with every operation's responses, is Redoc at /docs (docs-page.ts).
 */
import { withDiscoveryLink } from '../platform/discovery-html.ts';
import { listPlans } from '../vetting/vetting.queries.ts';
import { buildOpenApiDocument } from './openapi.ts';

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface Param {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema?: { type?: unknown; enum?: unknown[] };
}

/** Renders the reference page. */
export function renderRulesPage(baseUrl: string, version: string, limits: { free: number; pro: number }): string {
  const doc = buildOpenApiDocument(baseUrl, version) as {
    paths: Record<
      string,
      Record<string, { summary: string; description?: string; tags: string[]; parameters: Param[]; responses: Record<string, unknown> }>
    >;
  };
  const rows: string[] = [];
  const sections: string[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const id = `${method}-${p}`.replace(/[^a-z0-9]+/gi, '-');
      rows.push(
        `<tr><td><code>${method.toUpperCase()}</code></td><td><a href="#${id}"><code>${esc(p)}</code></a></td><td>${esc(op.summary)}</td></tr>`,
      );
      const params = op.parameters.length
        ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>description</th></tr>${op.parameters.map((x) => `<tr><td><code>${esc(x.name)}</code></td><td>${esc(x.in)}</td><td>${x.required ? 'yes' : 'no'}</td><td>${esc(x.description ?? '')}${x.schema?.enum ? ` (one of ${x.schema.enum.map(esc).join(', ')})` : ''}</td></tr>`).join('')}</table>`
        : '<p>No parameters.</p>';
      sections.push(
        `<section id="${id}"><h3><code>${method.toUpperCase()} ${esc(p)}</code> <small>${esc(op.tags.join(', '))}</small></h3><p>${esc(op.summary)}</p>${op.description ? `<p>${esc(op.description)}</p>` : ''}${params}<p>Statuses: ${Object.keys(op.responses).map(esc).join(', ')}</p></section>`,
      );
    }
  }
  return withDiscoveryLink(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Proofline API rules, limits and pricing</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .25em;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}section{border-top:1px solid #eee;margin-top:1.5rem}small{color:#777;font-weight:normal}</style></head>
<body>
<h1>Proofline API: rules, limits and pricing</h1>
<p>Interface version 1.0.0 (build ${esc(version)}). Machine-readable: <a href="/openapi.json"><code>/openapi.json</code></a> (OpenAPI 3.1). Most endpoints are <code>GET</code>; the writes (vetting, proof of care, watchlists, webhooks, admin) are <code>POST</code> (or <code>DELETE</code>) with JSON bodies. Every operation with its responses: <a href="/docs">/docs</a>.</p>
<h2>Rules every endpoint follows</h2>
<ul>
<li><b>Provenance.</b> Data-bearing responses carry an <code>origin</code> leaf; <code>leaf_hash</code> = SHA-256 of the RFC 8785 JSON of the leaf without <code>leaf_hash</code>. <code>/api/verify/{leaf_hash}</code> returns the leaf, its parent chain and an Ed25519-signed receipt; pass <code>prev_nonce</code> to chain receipts. Public keys: <a href="/.well-known/proofline-keys.json"><code>/.well-known/proofline-keys.json</code></a>. Offline check: <code>npm run verify-receipts -- receipts.json --keys proofline-keys.json</code>.</li>
<li><b>Errors.</b> Every 4xx/5xx body is <code>{error, status, ...}</code>: 400 names the <code>parameter</code>; 404 adds what was looked up and a <code>hint</code>; 429 and 503 send <code>Retry-After</code>. Unknown query parameters are ignored. A <code>limit</code> (or <code>days</code>) above its maximum is clamped and the body says so in <code>limit_clamped: {requested, max}</code>.</li>
<li><b>Usage.</b> Every /api JSON body ends with <code>usage_meta</code> (tier, requests this hour, limit, remaining, agent type, license and pricing URLs, trust status) and every /api response has <code>RateLimit-Limit</code>, <code>RateLimit-Remaining</code>, <code>RateLimit-Reset</code>, <code>RateLimit-Policy</code>. <code>trust_status</code>: confirm the accession number on <a href="https://www.sec.gov/edgar/search/">sec.gov</a> before relying on a figure; on carrier and vetting paths the source, license and trust status name FMCSA, and a carrier is confirmed on <a href="https://safer.fmcsa.dot.gov/">FMCSA SAFER</a>; on proof-of-care paths they describe the parties' own records (<code>self_reported</code>: recompute the chain at <code>/api/care/{id}/verify</code>).</li>
<li><b>Caching.</b> Responses carry a weak <code>ETag</code> over the data (not <code>usage_meta</code>); send <code>If-None-Match</code> for a <code>304</code>. Bodies of 1 KiB or more are compressed with brotli or gzip per <code>Accept-Encoding</code>. CORS: any origin may <code>GET</code>.</li>
</ul>
<h2 id="pricing">Tiers and pricing</h2>
<table><tr><th>tier</th><th>how</th><th>limit</th></tr>
<tr><td>Free</td><td>no key; counted per IP address</td><td>${limits.free} requests per hour</td></tr>
<tr><td>Pro</td><td><code>Authorization: Bearer &lt;key&gt;</code></td><td>${limits.pro} requests per hour (per key; can be raised per key)</td></tr></table>
<p>What a Pro key gives, and only this: a higher hourly limit (above), and the registered key that commercial use requires: reading is free, but citing data as verified and any commercial or high-volume use need a registered key and validating each figure against the primary SEC filing (the accession number on sec.gov). Aggregated benchmarks are not offered on any tier. Contact the operator for a Pro key.</p>
<h3 id="vetting-plans">Carrier vetting plans</h3>
<p>Machine-readable: <a href="/api/plans"><code>/api/plans</code></a>. Vetting records are paid in credits; ${listPlans()
    .rules.map(esc)
    .join(' ')}</p>
<table><tr><th>plan</th><th>price</th><th>lookups</th><th>vettings</th><th>batch size</th></tr>${listPlans()
    .plans.map(
      (p) =>
        `<tr><td>${esc(p.label)} <code>${esc(p.plan)}</code></td><td>${esc(p.price)}</td><td>${esc(p.lookups)}</td><td>${esc(p.vettings)}</td><td>${p.batch_limit === null ? 'unlimited' : esc(p.batch_limit)}</td></tr>`,
    )
    .join('')}</table>
<h2 id="license">License</h2>
<p><code>usage_meta.license</code> points here; <code>usage_meta.license_notice</code> repeats the sentence for the data served. SEC EDGAR and FMCSA data are U.S. government works (public domain). Proofline's compilation, origin leaves, receipts, risk scores and vetting records are licensed CC BY 4.0 (<a href="https://creativecommons.org/licenses/by/4.0/">creativecommons.org/licenses/by/4.0</a>). Proof-of-care events belong to the parties who appended them; the chain hashes and receipts are CC BY 4.0.</p>
<h2>Endpoints</h2>
<table><tr><th>method</th><th>path</th><th>what</th></tr>${rows.join('')}</table>
${sections.join('\n')}
</body></html>
`);
}
