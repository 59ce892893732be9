/**
 * Contract tables of the AI discovery standard 1.1.1-draft
 * (`../shared/spec/002_b1123c327d6ca789.txt`), transcribed from its tables:
 * the discovery file, the organization and capabilities objects, the
 * knowledge, feed, archive and page-manifest files and the _signature block.
 * Where the specification wraps items ("a glossary holds `assertionType` and a
 * `terms` array"), the rows follow the wrapping Proofline publishes.
 */
import type { ContractField, ContractTable } from './shape.ts';

const SPEC = '002_b1123c327d6ca789.txt';

const signature: ContractField[] = [
  { path: '_signature', type: 'object', required: true },
  { path: '_signature.contentHash', type: 'string', required: true },
  { path: '_signature.publishedAt', type: 'datetime', required: false },
  { path: '_signature.digitalName', type: 'string', required: false },
  { path: '_signature.identityContract', type: 'string', required: false },
  { path: '_signature.network', type: 'string', required: false },
  { path: '_signature.signedAt', type: 'datetime', required: false },
  { path: '_signature.anchoredAt', type: 'datetime', required: false },
  { path: '_signature.method', type: 'string', required: false },
];

/** Tier 3 adds `digitalName`, `network`, `signedAt`, `method` (required from tier 3). */
export const signatureTier3: ContractTable = {
  spec: `${SPEC}: _signature block (tier 3)`,
  fields: ['digitalName', 'network', 'signedAt', 'method'].map((k) => ({
    path: `_signature.${k}`,
    type: k === 'signedAt' ? 'datetime' : 'string',
    required: true,
  })),
};

const capabilityFields = (name: string): ContractField[] => [
  { path: `capabilities.${name}`, type: 'object', required: false },
  { path: `capabilities.${name}.available`, type: 'boolean', required: false },
  { path: `capabilities.${name}.url`, type: 'string', required: false },
  { path: `capabilities.${name}.auth`, type: 'string', required: false },
  { path: `capabilities.${name}.rateLimit`, type: 'string', required: false },
  { path: `capabilities.${name}.languages`, type: 'array', required: false },
  { path: `capabilities.${name}.languages[]`, type: 'string', required: false },
  { path: `capabilities.${name}.safety`, type: 'string', required: false },
];

/** "Discovery file" (required and optional fields), "organization object", "capabilities object". */
export const discoveryFile: ContractTable = {
  spec: `${SPEC}: Discovery file`,
  fields: [
    { path: 'specVersion', type: 'string', required: true },
    { path: 'schemaVersion', type: 'string', required: true },
    { path: 'standard', type: 'string', required: true },
    { path: 'generated', type: 'datetime', required: true },
    { path: 'organization', type: 'object', required: true },
    { path: 'organization.name', type: 'string', required: true },
    { path: 'organization.domain', type: 'string', required: true },
    { path: 'organization.mission', type: 'string', required: true },
    { path: 'organization.sector', type: 'array', required: true },
    { path: 'organization.sector[]', type: 'string', required: false },
    ...['digitalName', 'canonicalOrg', 'relationship', 'legalName', 'founded', 'headquarters', 'tagline', 'stage', 'blockchain'].map(
      (k): ContractField => ({ path: `organization.${k}`, type: 'string', required: false }),
    ),
    { path: 'coreConcepts', type: 'array', required: true },
    { path: 'coreConcepts[].term', type: 'string', required: true },
    { path: 'coreConcepts[].definition', type: 'string', required: true },
    { path: 'capabilities', type: 'object', required: false },
    ...['knowledge', 'feed', 'query', 'mcp', 'archive', 'pages'].flatMap(capabilityFields),
    { path: 'people', type: 'array', required: false },
    { path: 'knowledge', type: 'object', required: false },
    { path: 'feed', type: 'object', required: false },
    { path: 'pages', type: 'array', required: false },
    { path: 'applications', type: 'array', required: false },
    { path: 'partners', type: 'array', required: false },
    { path: 'technology', type: 'object', required: false },
    { path: 'contact', type: 'object', required: false },
    { path: 'humanReadable', type: 'url', required: false },
    ...signature.map((f) => ({ ...f, required: f.path === '_signature' ? false : f.required })),
  ],
};

/** "Knowledge file": the recommended sections with the specification's keys. */
export const knowledgeFile: ContractTable = {
  spec: `${SPEC}: Knowledge file`,
  fields: [
    { path: 'summary', type: 'object', required: true },
    { path: 'summary.assertionType', type: 'string', required: true },
    { path: 'summary.oneLiner', type: 'string', required: true },
    { path: 'summary.elevator', type: 'string', required: true },
    { path: 'summary.forAI', type: 'string', required: true },
    { path: 'glossary.assertionType', type: 'string', required: true },
    { path: 'glossary.terms', type: 'array', required: true },
    { path: 'glossary.terms[].term', type: 'string', required: true },
    { path: 'glossary.terms[].definition', type: 'string', required: true },
    { path: 'glossary.terms[].synonyms', type: 'array', required: false },
    { path: 'glossary.terms[].synonyms[]', type: 'string', required: false },
    { path: 'glossary.terms[].category', type: 'string', required: false },
    { path: 'products.assertionType', type: 'string', required: true },
    { path: 'products.items', type: 'array', required: true },
    { path: 'products.items[].name', type: 'string', required: true },
    { path: 'products.items[].description', type: 'string', required: true },
    { path: 'products.items[].status', type: 'string', required: false },
    { path: 'products.items[].features', type: 'array', required: false },
    { path: 'technology.assertionType', type: 'string', required: true },
    { path: 'technology.blockchain', type: 'string', required: false },
    { path: 'technology.security', type: 'string', required: false },
    { path: 'technology.architecture', type: 'string', required: false },
    ...signature,
  ],
};

/** "Feed file": every item's members. */
export const feedFile: ContractTable = {
  spec: `${SPEC}: Feed file`,
  fields: [
    { path: 'items', type: 'array', required: true },
    { path: 'items[].id', type: 'string', required: true },
    { path: 'items[].title', type: 'string', required: true },
    { path: 'items[].url', type: 'url', required: true },
    { path: 'items[].published', type: 'datetime', required: true },
    { path: 'items[].category', type: 'string', required: true },
    { path: 'items[].tags', type: 'array', required: true },
    { path: 'items[].tags[]', type: 'string', required: false },
    { path: 'items[].assertionType', type: 'string', required: true },
    { path: 'items[].summary', type: 'string', required: true },
    { path: 'items[].keyFacts', type: 'array', required: true },
    { path: 'items[].keyFacts[]', type: 'string', required: false },
    { path: 'items[].relatedConcepts', type: 'array', required: true },
    ...signature,
  ],
};

/** "Archive file": top-level fields and the record table. */
export const archiveFile: ContractTable = {
  spec: `${SPEC}: Archive file`,
  fields: [
    { path: 'specVersion', type: 'string', required: true },
    { path: 'standard', type: 'string', required: true },
    { path: 'organization', type: 'object', required: true },
    { path: 'organization.name', type: 'string', required: true },
    { path: 'organization.digitalName', type: 'string', required: false },
    { path: 'archive', type: 'array', required: true },
    { path: 'archive[].versionId', type: 'string', required: true },
    { path: 'archive[].resource', type: 'string', required: true },
    { path: 'archive[].contentHash', type: 'string', required: true },
    { path: 'archive[].publishedAt', type: 'datetime', required: true },
    { path: 'archive[].assertionType', type: 'string', required: false },
    { path: 'archive[].signedAt', type: 'datetime', required: false },
    { path: 'archive[].anchoredAt', type: 'datetime', required: false },
    { path: 'archive[].supersedes', type: 'string', required: false },
    { path: 'archive[].summary', type: 'string', required: false },
    ...signature,
  ],
};

/** "Page manifest (`/ai/pages.json`)". */
export const pageManifest: ContractTable = {
  spec: `${SPEC}: Page manifest`,
  fields: [
    { path: 'specVersion', type: 'string', required: true },
    { path: 'standard', type: 'string', required: true },
    { path: 'pages', type: 'array', required: true },
    { path: 'pages[].path', type: 'string', required: true },
    { path: 'pages[].title', type: 'string', required: true },
    { path: 'pages[].assertionType', type: 'string', required: true },
    { path: 'pages[].contentHash', type: 'string', required: true },
    { path: 'pages[].format', type: 'string', required: true },
    ...signature,
  ],
};
