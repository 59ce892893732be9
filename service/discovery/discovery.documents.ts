/**
 * The content of every discovery file, built from configuration, the routes
 * this instance actually serves and the published snapshot manifests. Pure
 * functions: `generated` and the signature are stamped by the publisher.
 */
import { SCHEMA_VERSION, SPEC_VERSION } from '../../lib/discovery/manifest.ts';
import type { SnapshotManifest } from '../../lib/warehouse/snapshot.ts';
import type { McpToolSummary } from '../mcp/mcp.queries.ts';

export interface OrgIdentity {
  name: string;
  domain: string;
  mission: string;
  sector: string[];
}

export interface RouteInfo {
  method: string;
  route: string;
}

export interface DiscoveryContext {
  base: string;
  org: OrgIdentity;
  version: string;
  routes: RouteInfo[];
  /** Every published snapshot manifest still on disk, any domain. */
  snapshots: SnapshotManifest[];
  /** When this instance first served `version`. */
  releaseSeenAt: string;
  signerAddress: string | null;
  carrierQueries: boolean;
  /** The MCP tools this instance serves (empty without /mcp), from the one tool registry (mcp.queries.ts). */
  mcpTools: McpToolSummary[];
}

export const PATHS = {
  manifest: '/.well-known/ai',
  knowledge: '/ai/knowledge.json',
  feed: '/ai/feed.json',
  archive: '/.well-known/archive',
  pages: '/ai/pages.json',
  query: '/ai/query',
  llms: '/llms.txt',
  home: '/',
  keys: '/.well-known/proofline-keys.json',
  schema: '/ai/schemas/ai-discovery-1.1.1.json',
  mcp: '/mcp',
} as const;

/** Spec cache lifetimes (seconds): discovery 24 h, knowledge/archive/pages 1 h, feed 30 min. */
export const CACHE_SECONDS: Record<string, number> = {
  [PATHS.manifest]: 86_400,
  [PATHS.knowledge]: 3_600,
  [PATHS.feed]: 1_800,
  [PATHS.archive]: 3_600,
  [PATHS.pages]: 3_600,
  [PATHS.query]: 3_600,
  [PATHS.llms]: 3_600,
  [PATHS.home]: 300,
  [PATHS.schema]: 86_400,
};

const SAFETY =
  'Read-only. Facts derived from public SEC EDGAR and FMCSA records, each with a SHA-256 origin leaf back to its source file; not investment, legal or safety advice.';

/**
 * Claims about /mcp, true as served (spec 002 capability `safety` and `rateLimit` are free text, so they must not
 * overstate): not read-only, because freight_carrier_vet writes a signed vetting record and spends a credit.
 */
const mcpSafety = (writers: string[]) => {
  const others = writers.filter((w) => w !== 'freight_carrier_vet');
  return `Not read-only: freight_carrier_vet makes a signed vetting record and spends one credit of the paying account (the request's Authorization: Bearer API key, else the broker_id's free account with 30 signup credits; plans at /api/plans)${others.length ? `; ${others.join(', ')} also ${others.length > 1 ? 'write' : 'writes'} the account's own state` : ''}. The other tools only read public SEC EDGAR and FMCSA records and the service's own records; not investment, legal or safety advice.`;
};
const MCP_RATE_LIMIT =
  "One metering rule with /api (docs/limits.md): each tools/call counts; registry tools (sec_*) against the hourly limit of the client's tier, carrier tools against the lookup abuse guard (carrier lookups are unlimited on every plan); each result's _meta['proofline/usage'] gives the count. Each vetting record made by freight_carrier_vet also costs one credit (plans: /api/plans).";

export const CORE_CONCEPTS = [
  {
    term: 'origin leaf',
    definition:
      'A JSON object naming the source file, its SHA-256 and the SHA-256 of the RFC 8785 canonical record, hashed itself into leaf_hash; it lets anyone recompute where a fact came from.',
  },
  {
    term: 'content hash',
    definition: '"sha256:" + hex SHA-256 of the RFC 8785 canonical JSON of a document without its _signature member.',
  },
  {
    term: 'snapshot',
    definition:
      'An immutable, atomically published set of parquet tables of one warehouse domain, with a manifest of row counts and file hashes.',
  },
  {
    term: 'identity card',
    definition: 'Layer 0 answer about a company (about 200 tokens): name, CIK, ticker, exchange, industry, status and its origin leaf.',
  },
  {
    term: 'vetting record',
    definition:
      'A timestamped, signed record of why a motor carrier was chosen for a load, with the hash of the regulator data it was based on.',
  },
  {
    term: 'custody chain',
    definition:
      'Hash-linked, append-only events of a shipment (tender, pickup, transit, delivery) that can be verified without authentication.',
  },
];

/** Product families, each listed only when at least one of its routes is registered on this instance. */
const PRODUCTS: { name: string; description: string; match: RegExp }[] = [
  {
    name: 'Company registry API',
    description:
      'SEC registrants by ticker or CIK: identity cards, profiles, timelines, filings, people, search; every answer carries origin leaves.',
    match: /^\/api\/(company|person|search|signals|ir)\b/,
  },
  {
    name: 'Verification receipts',
    description: 'Look up any issued origin leaf and receive an Ed25519-signed, chainable receipt.',
    match: /^\/api\/verify\b/,
  },
  {
    name: 'Carrier vetting API',
    description: 'FMCSA carriers: search, safety BASICs, crashes, inspections, enforcement, signed vetting records, plans and prices.',
    match: /^\/api\/(carriers?|safety|crashes|inspections|enforcement|red-flags|fmcsa|vet|vet-preview|vetting|batch-vet|plans)\b/,
  },
  { name: 'Proof of care', description: 'Tamper-evident custody chains for shipments, verifiable by anyone.', match: /^\/api\/care\b/ },
  {
    name: 'Status and attestation',
    description: 'Health, dataset counts and as-of dates, and root hashes over the published tables.',
    match: /^\/api\/(health|status|stats|attestation)\b/,
  },
  { name: 'MCP server', description: 'Model Context Protocol over Streamable HTTP (JSON-RPC 2.0, stateless).', match: /^\/mcp$/ },
  { name: 'OpenAPI description', description: 'OpenAPI 3.1 document of the REST API.', match: /^\/openapi\.json$/ },
  {
    name: 'AI discovery files',
    description: 'This manifest, knowledge, feed, archive, page manifest and query contract, each with a content hash.',
    match: /^\/(\.well-known\/(ai|archive)|ai\/|llms\.txt)/,
  },
];

export function hasRoute(ctx: DiscoveryContext, path: string): boolean {
  return ctx.routes.some((r) => r.route === path);
}

export function productsOf(ctx: DiscoveryContext) {
  return PRODUCTS.map((p) => ({
    name: p.name,
    description: p.description,
    endpoints: [...new Set(ctx.routes.filter((r) => p.match.test(r.route)).map((r) => `${r.method} ${r.route}`))].sort(),
  })).filter((p) => p.endpoints.length > 0);
}

function capability(url: string, available = true) {
  return { available, url, auth: 'none', rateLimit: 'none', languages: ['en'], safety: SAFETY };
}

/**
 * The MCP capability: endpoint, transport and every tool with its one-line description and parameters, generated
 * from the tool registry, so it cannot drift from tools/list; the safety text names the tools that write.
 */
function mcpCapability(ctx: DiscoveryContext) {
  const writers = ctx.mcpTools.filter((t) => !t.read_only).map((t) => t.name);
  return {
    ...capability(`${ctx.base}${PATHS.mcp}`, hasRoute(ctx, PATHS.mcp)),
    rateLimit: MCP_RATE_LIMIT,
    transport: 'http',
    protocol: 'MCP over Streamable HTTP (JSON-RPC 2.0), stateless',
    safety: writers.length ? mcpSafety(writers) : SAFETY,
    tools: ctx.mcpTools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters, readOnly: t.read_only })),
  };
}

/** `/.well-known/ai` without `generated` and `_signature`. */
export function buildManifest(ctx: DiscoveryContext, generated: string) {
  const b = ctx.base;
  return {
    $schema: `${b}${PATHS.schema}`,
    specVersion: SPEC_VERSION,
    schemaVersion: SCHEMA_VERSION,
    standard: 'ai-discovery',
    generated,
    // Tier 3 (spec 002 "organization object"): digitalName is the address that signs these files.
    organization: { ...ctx.org, ...(ctx.signerAddress ? { digitalName: ctx.signerAddress } : {}) },
    coreConcepts: CORE_CONCEPTS,
    capabilities: {
      knowledge: capability(`${b}${PATHS.knowledge}`),
      feed: capability(`${b}${PATHS.feed}`),
      query: {
        ...capability(`${b}${PATHS.query}`),
        rateLimit:
          "One metering rule with /api (docs/limits.md): a company query counts against the hourly limit of the client's tier, a carrier query against the lookup abuse guard (carrier lookups are unlimited on every plan); RateLimit-* response headers give the count.",
      },
      mcp: mcpCapability(ctx),
      archive: capability(`${b}${PATHS.archive}`),
      // Spec 002: "The signed page manifest is advertised in capabilities".
      pages: capability(`${b}${PATHS.pages}`),
    },
    // Spec 002: `pages` is an array, the site map with the semantic purpose of each page.
    pages: siteMap(ctx),
    // The API families this instance actually registers (registry, vetting, care, MCP, ...), with their routes.
    applications: productsOf(ctx).map((p) => ({ ...p, baseUrl: b })),
    technology: {
      contentHash: 'sha256 over RFC 8785 (JCS) canonical JSON of the document without _signature',
      signing: {
        discoverySigner: ctx.signerAddress,
        discoverySignatureMethod: ctx.signerAddress ? 'eip191-personal-sign-secp256k1 over the contentHash string' : null,
        receiptKeys: `${b}${PATHS.keys}`,
        receiptAlgorithm: 'Ed25519 over RFC 8785 canonical JSON',
      },
    },
    // Spec 002: humanReadable is a string, the link to a human-readable explanation.
    humanReadable: `${b}${PATHS.home}`,
    llmsTxt: `${b}${PATHS.llms}`,
  };
}

/** The manifest's site map (spec 002 `pages`: array with each page's purpose); routes this instance does not serve are left out. */
export function siteMap(ctx: DiscoveryContext): { path: string; title: string; purpose: string }[] {
  const pages = [
    { path: PATHS.home, title: `${ctx.org.name} home`, purpose: 'Human overview of the products, with links for AI agents' },
    { path: '/docs', title: 'API reference', purpose: 'Every REST endpoint with its parameters, errors, limits and pricing' },
    { path: '/openapi.json', title: 'OpenAPI description', purpose: 'Machine-readable OpenAPI 3.1 description of the REST API' },
    { path: '/api/plans', title: 'Vetting plans', purpose: 'Carrier vetting plans, prices, purchase sizes and batch limits' },
    { path: PATHS.llms, title: 'llms.txt', purpose: 'Plain-text summary of the service for language models' },
    { path: PATHS.knowledge, title: 'Knowledge', purpose: 'Summary, glossary, products and technology of the service' },
    { path: PATHS.feed, title: 'Feed', purpose: 'Published data snapshots and releases, newest first' },
    { path: PATHS.archive, title: 'Archive', purpose: 'Every version of every discovery file, with supersession lineage' },
    { path: PATHS.pages, title: 'Page manifest', purpose: 'Content hashes of the bytes served at each page' },
    { path: PATHS.query, title: 'Query contract', purpose: 'Request and response contract of the structured query endpoint' },
  ];
  const routed = new Set(['/docs', '/openapi.json', '/api/plans']);
  return pages.filter((p) => !routed.has(p.path) || hasRoute(ctx, p.path));
}

/** `/ai/knowledge.json`: the recommended sections of spec 002 with its keys (summary, glossary, products, technology). */
export function buildKnowledge(ctx: DiscoveryContext, generated: string) {
  const domains = [...new Set(ctx.snapshots.map((s) => s.domain))].sort();
  const products = productsOf(ctx);
  return {
    specVersion: SPEC_VERSION,
    schemaVersion: SCHEMA_VERSION,
    generated,
    organization: { name: ctx.org.name, domain: ctx.org.domain },
    summary: {
      assertionType: 'official-policy',
      oneLiner: `${ctx.org.name}: ${ctx.org.mission}`,
      elevator: `${ctx.org.name} serves ${products.map((p) => p.name).join(', ')}. Every fact is served with a SHA-256 origin leaf back to the public source file it came from.`,
      forAI:
        'Cite the origin leaf (leaf_hash) with any figure you repeat; /api/verify/{leaf_hash} returns a signed receipt. Data is public-record derived; confirm on the primary source (SEC EDGAR, FMCSA SAFER) before relying on it.',
      publishedDomains: domains,
    },
    glossary: {
      assertionType: 'technical-documentation',
      terms: CORE_CONCEPTS.map((c) => ({
        term: c.term,
        definition: c.definition,
        synonyms: GLOSSARY_EXTRA[c.term]?.synonyms ?? [],
        category: GLOSSARY_EXTRA[c.term]?.category ?? 'concept',
      })),
    },
    products: {
      assertionType: 'technical-documentation',
      items: products.map((p) => ({
        name: p.name,
        description: p.description,
        status: 'live',
        features: p.endpoints,
        endpoints: p.endpoints,
      })),
    },
    technology: {
      assertionType: 'technical-documentation',
      blockchain: ctx.signerAddress
        ? `Tier 3 discovery signatures: EIP-191 personal_sign by ${ctx.signerAddress} over each file's contentHash; no on-chain anchoring.`
        : 'None: tier 2 discovery files (contentHash only, no secp256k1 key configured); no on-chain anchoring.',
      security: `Origin leaves: SHA-256 over RFC 8785 canonical JSON, chained to source-file leaves; Ed25519-signed receipts and vetting records, public keys at ${ctx.base}${PATHS.keys}.`,
      architecture:
        'Parquet files per domain snapshot (the record), indexed DuckDB serving copies, atomic CURRENT pointer swaps; a single-writer state store for vetting records and custody chains.',
    },
  };
}

/** Glossary synonyms and categories (spec 002 knowledge `glossary`: term, definition, synonyms, category). */
const GLOSSARY_EXTRA: Record<string, { synonyms: string[]; category: string }> = {
  'origin leaf': { synonyms: ['origin', 'provenance leaf'], category: 'provenance' },
  'content hash': { synonyms: ['contentHash'], category: 'provenance' },
  snapshot: { synonyms: ['warehouse snapshot'], category: 'data' },
  'identity card': { synonyms: ['layer 0'], category: 'registry' },
  'vetting record': { synonyms: ['carrier vetting'], category: 'vetting' },
  'custody chain': { synonyms: ['proof of care', 'care document'], category: 'custody' },
};

function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v) || 0;
}

/** One feed item per published ingest run (snapshot) still on disk, plus the running release; newest first. */
export function buildFeed(ctx: DiscoveryContext, generated: string) {
  const runs = ctx.snapshots.map((s) => {
    const tables = Object.entries(s.tables).sort(([a], [b]) => a.localeCompare(b));
    const rows = tables.reduce((n, [, t]) => n + num(t.rows), 0);
    return {
      id: `snapshot:${s.domain}:${s.snapshot_id}`,
      title: `${s.domain} snapshot ${s.snapshot_id} published`,
      url: `${ctx.base}${PATHS.feed}#snapshot:${s.domain}:${s.snapshot_id}`,
      published: s.published_at,
      category: 'data-release',
      tags: ['snapshot', s.domain],
      assertionType: 'technical-documentation',
      summary: `Ingest run ${s.run_id} published ${tables.length} ${s.domain} tables with ${rows} rows in total.`,
      keyFacts: [
        `domain: ${s.domain}`,
        `run_id: ${s.run_id}`,
        `input_digest: ${s.input_digest ?? 'none'}`,
        `rows: ${rows}`,
        ...tables.map(([name, t]) => `table ${name}: ${num(t.rows)} rows, sha256 ${t.sha256}`),
      ],
      relatedConcepts: ['snapshot', 'origin leaf', s.domain],
    };
  });
  const release = {
    id: `release:${ctx.version}`,
    title: `${ctx.org.name} ${ctx.version} in service`,
    url: `${ctx.base}${PATHS.home}`,
    published: ctx.releaseSeenAt,
    category: 'release',
    tags: ['release', ctx.version],
    assertionType: 'technical-documentation',
    summary: `Version ${ctx.version} serving ${productsOf(ctx).length} product families.`,
    keyFacts: [`version: ${ctx.version}`, ...productsOf(ctx).map((p) => `${p.name}: ${p.endpoints.length} endpoints`)],
    relatedConcepts: ['identity card', 'content hash'],
  };
  const items = [...runs, release].sort((a, b) =>
    a.published < b.published ? 1 : a.published > b.published ? -1 : a.id.localeCompare(b.id),
  );
  return {
    specVersion: SPEC_VERSION,
    schemaVersion: SCHEMA_VERSION,
    generated,
    organization: { name: ctx.org.name, domain: ctx.org.domain },
    items,
  };
}

/** The documented request/response contract of /ai/query (served at GET /ai/query without `q`). */
export function buildQueryContract(ctx: DiscoveryContext, generated: string) {
  const types: { type: string; source: string; q: string; returns: string }[] = [
    {
      type: 'company',
      source: 'registry',
      q: 'ticker (AAPL, BRK-B) or CIK (320193, CIK0000320193)',
      returns: 'the layer 0 identity card (schema proofline/sec-company/v1) with its origin leaf',
    },
  ];
  if (ctx.carrierQueries)
    types.push({
      type: 'carrier',
      source: 'fmcsa',
      q: 'USDOT number (1-8 digits), MC/MX/FF docket (MC123456) or part of the legal or DBA name',
      returns: 'up to 10 ranked FMCSA census rows with risk level (as GET /api/carriers)',
    });
  return {
    standard: 'proofline-ai-query',
    specVersion: SPEC_VERSION,
    schemaVersion: SCHEMA_VERSION,
    generated,
    endpoint: `${ctx.base}${PATHS.query}`,
    request: {
      methods: ['GET', 'POST'],
      get: `${PATHS.query}?q=<text>&type=<type>`,
      post: {
        contentType: 'application/json',
        body: { q: 'string (required, 1-200 characters)', type: `one of ${types.map((t) => t.type).join(', ')} (default company)` },
      },
      types,
    },
    response: {
      contentType: 'application/json',
      body: {
        schema: 'proofline/ai-query/v1',
        query: { q: 'string', type: 'string' },
        source: 'warehouse domain answered from',
        results: 'array of records, each with origin',
      },
    },
    errors: {
      400: '{error, status, parameter}: missing or invalid q or type',
      404: '{error, status, ...}: nothing matches (company: ticker and hint)',
      503: '{error, status, retry_after_seconds}: the domain has no published snapshot yet, or is not served by this instance',
    },
    carrierData: ctx.carrierQueries
      ? 'available (type carrier)'
      : 'not available on this instance: carrier queries are not served yet, only registry data',
  };
}

export interface PageEntry {
  path: string;
  title: string;
  assertionType: string;
  contentHash: string;
  format: string;
}

export function buildPages(ctx: DiscoveryContext, generated: string, pages: PageEntry[]) {
  return {
    standard: 'ai-page-manifest',
    specVersion: SPEC_VERSION,
    schemaVersion: SCHEMA_VERSION,
    generated,
    organization: { name: ctx.org.name, domain: ctx.org.domain },
    hashing: 'contentHash = "sha256:" + SHA-256 of the exact bytes served at path (GET, no content coding)',
    pages,
  };
}

export function buildArchive(ctx: DiscoveryContext, generated: string, records: unknown[]) {
  return {
    standard: 'ai-archive',
    specVersion: SPEC_VERSION,
    schemaVersion: SCHEMA_VERSION,
    generated,
    // Spec 002 "Archive file": organization (name, digitalName at tier 3) and the records under `archive`.
    organization: { name: ctx.org.name, domain: ctx.org.domain, ...(ctx.signerAddress ? { digitalName: ctx.signerAddress } : {}) },
    archive: records,
  };
}

/** llms.txt (llmstxt.org): H1, a `>` summary, H2 link lists; generated from the same data as the manifest. */
export function buildLlmsTxt(ctx: DiscoveryContext): string {
  const b = ctx.base;
  const lines = [
    `# ${ctx.org.name}`,
    '',
    `> ${ctx.org.mission}`,
    '',
    `Sectors: ${ctx.org.sector.join(', ')}. Domain: ${ctx.org.domain}.`,
    '',
    '## Discovery',
    '',
  ];
  lines.push(`- [AI discovery manifest](${b}${PATHS.manifest}): ai-discovery ${SPEC_VERSION}, content-hashed`);
  lines.push(`- [Knowledge](${b}${PATHS.knowledge}): summary, glossary, products, technology`);
  lines.push(`- [Feed](${b}${PATHS.feed}): published ingest runs and releases`);
  lines.push(`- [Archive](${b}${PATHS.archive}): every version of every discovery file`);
  lines.push(`- [Query contract](${b}${PATHS.query}): registry${ctx.carrierQueries ? ' and carrier' : ''} lookups`);
  if (ctx.mcpTools.length) {
    lines.push('', '## MCP tools', '', `Endpoint: ${b}${PATHS.mcp} (MCP over Streamable HTTP, JSON-RPC 2.0, stateless).`, '');
    for (const t of ctx.mcpTools) lines.push(`- ${t.name}(${t.parameters.join(', ')}): ${t.description}`);
  }
  lines.push('', '## Products', '');
  for (const p of productsOf(ctx)) lines.push(`- ${p.name}: ${p.description} (${p.endpoints.length} endpoints)`);
  lines.push('', '## Concepts', '');
  for (const c of CORE_CONCEPTS) lines.push(`- ${c.term}: ${c.definition}`);
  return lines.join('\n') + '\n';
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The human home page (its <head> gets the ai-discovery link from withDiscoveryLink). */
export function buildHomeHtml(ctx: DiscoveryContext): string {
  const jsonLd = JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'Organization',
    name: ctx.org.name,
    url: ctx.base,
    description: ctx.org.mission,
    knowsAbout: ctx.org.sector,
  }).replace(/</g, '\\u003c');
  const products = productsOf(ctx)
    .map(
      (p) =>
        `<li><strong>${esc(p.name)}</strong>: ${esc(p.description)}<br><code>${p.endpoints.map(esc).join('</code>, <code>')}</code></li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(ctx.org.name)}</title>
<script type="application/ld+json">${jsonLd}</script>
</head>
<body>
<h1>${esc(ctx.org.name)}</h1>
<p>${esc(ctx.org.mission)}</p>
<h2>For AI agents</h2>
<ul>
<li><a href="${PATHS.manifest}">AI discovery manifest</a> (<code>${PATHS.manifest}</code>)</li>
<li><a href="${PATHS.llms}">llms.txt</a></li>
<li><a href="${PATHS.knowledge}">Knowledge</a>, <a href="${PATHS.feed}">feed</a>, <a href="${PATHS.archive}">archive</a>, <a href="${PATHS.pages}">page manifest</a>, <a href="${PATHS.query}">query contract</a></li>
</ul>
<h2>Products</h2>
<ul>
${products}
</ul>
</body>
</html>
`;
}
