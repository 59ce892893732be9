/**
 * The printable custody page of a proof-of-care document (GET /api/care/{id}):
 * what a broker shows a claims adjuster. Everything shown comes from the
 * stored chain and a fresh verification; every value is HTML-escaped.
 */
import { withDiscoveryLink } from '../platform/discovery-html.ts';
import type { CareDocument, CareEvent } from './care.queries.ts';
import type { VerifyResult } from './care.chain.ts';

const esc = (v: unknown): string =>
  String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function partyText(p: unknown): string {
  if (typeof p === 'string') return esc(p);
  if (p && typeof p === 'object') {
    const o = p as Record<string, unknown>;
    const parts = [
      o.name,
      o.role,
      o.organization,
      o.dot_number !== undefined ? `USDOT ${o.dot_number}` : null,
      o.mc !== undefined ? `MC ${o.mc}` : null,
    ].filter(Boolean);
    return esc(parts.length ? parts.join(' · ') : JSON.stringify(o));
  }
  return '';
}

function evidenceText(ev: unknown): string {
  if (!ev || typeof ev !== 'object') return esc(ev);
  const entries = Object.entries(ev as Record<string, unknown>);
  if (entries.length === 0) return '<span class="muted">none</span>';
  return `<dl>${entries.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(typeof v === 'string' ? v : JSON.stringify(v))}</dd>`).join('')}</dl>`;
}

/** Renders the custody page. `jsonHref` is the machine-readable twin, `verifyHref` the chain check. */
export function renderCarePage(
  doc: CareDocument,
  events: CareEvent[],
  v: VerifyResult,
  links: { jsonHref: string; verifyHref: string; vettingHref: string | null },
): string {
  const s = (doc.shipment ?? {}) as Record<string, unknown>;
  const p = (doc.parties ?? {}) as Record<string, unknown>;
  const value =
    typeof s.value_usd === 'number' ? s.value_usd.toLocaleString('en-US', { style: 'currency', currency: 'USD' }) : esc(s.value_usd);
  const status = v.valid
    ? `<p class="ok" id="verification">Chain verified: ${v.events_verified} of ${events.length} events intact, linked to the creation record.</p>`
    : `<div class="bad" id="verification"><p>Chain NOT verified: ${v.problems.length} problem(s).</p><ul>${v.problems.map((pr) => `<li>${pr.seq === null ? '' : `event ${esc(pr.seq)}: `}${esc(pr.message)}</li>`).join('')}</ul></div>`;
  const rows = events
    .map(
      (e) =>
        `<tr><td>${esc(e.seq)}</td><td class="stage">${esc(e.stage)}</td><td>${e.occurred_at ? `${esc(e.occurred_at)}<div class="muted">recorded ${esc(e.recorded_at)}</div>` : `${esc(e.recorded_at)}<div class="muted">recorded time</div>`}</td><td>${partyText(e.actor)}</td><td>${evidenceText(e.evidence)}</td><td class="hash">${esc(e.hash)}<div class="muted">prev ${esc(e.prev_hash)}</div></td></tr>`,
    )
    .join('');
  return withDiscoveryLink(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Proof of care ${esc(doc.document_id)}</title>
<link rel="alternate" type="application/json" href="${esc(links.jsonHref)}">
<style>
 body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;max-width:1100px;margin:24px auto;padding:0 16px}
 h1{font-size:22px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
 table{border-collapse:collapse;width:100%;table-layout:fixed} th,td{border:1px solid #bbb;padding:6px 8px;vertical-align:top;text-align:left;overflow-wrap:anywhere}
 col.n{width:4%} col.st{width:17%} col.wh{width:15%} col.ac{width:14%} col.ev{width:28%} col.hs{width:22%}
 th{background:#f2f2f2} .hash{font:10px/1.3 ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
 .muted{color:#666;font-size:12px} .stage{font-weight:600;overflow-wrap:normal;font-size:13px} dl{margin:0} dt{font-weight:600} dd{margin:0 0 4px 0;word-break:break-all}
 .ok{background:#e7f6e7;border:1px solid #5a5;padding:8px 12px} .bad{background:#fde8e8;border:1px solid #c44;padding:8px 12px}
 .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:8px 24px}
 @media print{body{margin:0;max-width:none} a{color:#000;text-decoration:none} .noprint{display:none} th{background:#eee !important}}
</style>
</head>
<body>
<h1>Proof of care: chain of custody</h1>
<p class="muted">Document <strong>${esc(doc.document_id)}</strong>, created ${esc(doc.created_at)}</p>
${status}
<h2>Shipment</h2>
<div class="grid">
 <div><strong>Reference</strong><br>${esc(s.ref)}</div>
 <div><strong>Commodity</strong><br>${esc(s.commodity)}</div>
 <div><strong>Declared value</strong><br>${value}</div>
 <div><strong>Broker</strong><br>${partyText(p.broker)}</div>
 <div><strong>Carrier</strong><br>${partyText(p.carrier)}</div>
 <div><strong>Carrier vetting</strong><br>${doc.vetting_id ? `${links.vettingHref ? `<a href="${esc(links.vettingHref)}">${esc(doc.vetting_id)}</a>` : esc(doc.vetting_id)}<div class="hash">data_hash ${esc(doc.vetting_data_hash)}</div>` : '<span class="muted">none linked</span>'}</div>
</div>
<h2>Custody events (${events.length})</h2>
${events.length ? `<table><colgroup><col class="n"><col class="st"><col class="wh"><col class="ac"><col class="ev"><col class="hs"></colgroup><thead><tr><th>#</th><th>Stage</th><th>When</th><th>Actor</th><th>Evidence</th><th>Hash</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">No custody events recorded yet.</p>'}
<h2>Integrity</h2>
<p>Creation record hash: <span class="hash">${esc(doc.creation_hash)}</span><br>Chain head: <span class="hash">${esc(doc.head_hash)}</span></p>
<p class="muted">Each event's hash is the SHA-256 of the RFC 8785 canonical JSON of its content, which includes the previous event's hash (the first event links to the creation record). Anyone can recompute the chain from the <a href="${esc(links.jsonHref)}">JSON export</a>; <a href="${esc(links.verifyHref)}">verify it here</a>.</p>
<p class="muted noprint">Printed pages carry the same hashes; the chain is append-only.</p>
</body>
</html>`);
}
