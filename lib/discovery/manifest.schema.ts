/**
 * Our own strict schema of an ai-discovery 1.1.1 manifest (the vendor's
 * `ai-discovery-v1.2.json` is referenced but unpublished). The agent reads
 * leniently (manifest.ts) and reports conformance to this schema separately;
 * the publisher serves its JSON Schema form at /ai/schemas/ai-discovery-1.1.1.json.
 * Extra members are allowed everywhere (the spec lists many optional ones).
 */
import { z } from 'zod';

const isoTime = z.iso.datetime({ offset: true });
const capability = z
  .object({
    available: z.boolean(),
    url: z.string().min(1).optional(),
    auth: z.enum(['none', 'apiKey', 'digitalName', 'oauth']).optional(),
    rateLimit: z.string().optional(),
    languages: z.array(z.string()).optional(),
    safety: z.string().optional(),
  })
  .loose();

export const signatureBlockSchema = z
  .object({
    contentHash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'contentHash must be sha256:<64 lower-case hex>'),
    canonicalization: z.string().optional(),
    method: z.string().optional(),
    digitalName: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'digitalName must be an Ethereum address')
      .optional(),
    network: z.string().optional(),
    signedAt: isoTime.optional(),
    anchoredAt: isoTime.optional(),
    identityContract: z.string().optional(),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]{130}$/, 'signature must be 65 bytes hex')
      .optional(),
  })
  .loose();

const optionalString = z.string().optional();

/** Spec 002 "organization object": name, domain, mission, sector required; the rest optional strings. */
const organization = z
  .object({
    name: z.string().min(1),
    domain: z.string().min(1),
    mission: z.string().min(1),
    sector: z.array(z.string().min(1)).min(1),
    digitalName: optionalString,
    canonicalOrg: optionalString,
    relationship: z.enum(['subsidiary', 'brand', 'region', 'division']).optional(),
    legalName: optionalString,
    founded: optionalString,
    headquarters: optionalString,
    tagline: optionalString,
    stage: optionalString,
    blockchain: optionalString,
  })
  .loose();

export const discoveryManifestSchema = z
  .object({
    specVersion: z.string().regex(/^1\.1\.1(-draft)?$/, 'specVersion must be 1.1.1 or 1.1.1-draft'),
    schemaVersion: z.literal('2026-02'),
    standard: z.literal('ai-discovery'),
    generated: isoTime,
    organization,
    coreConcepts: z.array(z.object({ term: z.string().min(1), definition: z.string().min(1) }).loose()),
    capabilities: z
      .object({ knowledge: capability, feed: capability, query: capability, mcp: capability, archive: capability, pages: capability })
      .partial()
      .loose()
      .optional(),
    people: z.array(z.unknown()).optional(),
    knowledge: z.object({}).loose().optional(),
    feed: z.object({}).loose().optional(),
    // The site map: an array with the semantic purpose of each page (item shape not given by the spec).
    pages: z.array(z.unknown()).optional(),
    applications: z.array(z.unknown()).optional(),
    partners: z.array(z.unknown()).optional(),
    technology: z.object({}).loose().optional(),
    contact: z.object({}).loose().optional(),
    humanReadable: z.string().optional(),
    _signature: signatureBlockSchema.optional(),
  })
  .loose();

function issuesOf(r: { success: boolean; error?: z.ZodError }): string[] {
  return r.success ? [] : r.error!.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
}

/** Tier 3 (spec 002 "_signature block"): a signature with a digitalName also needs network, signedAt and method. */
function tier3Issues(doc: unknown): string[] {
  const sig = typeof doc === 'object' && doc !== null ? (doc as { _signature?: unknown })._signature : undefined;
  if (typeof sig !== 'object' || sig === null || !('digitalName' in sig)) return [];
  return (['network', 'signedAt', 'method'] as const)
    .filter((k) => typeof (sig as Record<string, unknown>)[k] !== 'string')
    .map((k) => `_signature.${k}: required from tier 3 (the signature names a digitalName)`);
}

/** Strict conformance of a manifest to spec 1.1.1: the issues as `path: message` lines (empty when it conforms). */
export function checkManifestConformance(doc: unknown): string[] {
  return [...issuesOf(discoveryManifestSchema.safeParse(doc)), ...tier3Issues(doc)];
}

/** Spec 002 "Archive file": specVersion, standard `ai-archive`, organization (name, digitalName), `archive` records. */
export const archiveFileSchema = z
  .object({
    specVersion: z.string(),
    standard: z.literal('ai-archive'),
    organization: z.object({ name: z.string().min(1), digitalName: optionalString }).loose(),
    archive: z.array(
      z
        .object({
          versionId: z.string().min(1),
          resource: z.string().min(1),
          contentHash: z.string().min(1),
          publishedAt: isoTime,
          assertionType: optionalString,
          signedAt: isoTime.optional(),
          anchoredAt: isoTime.optional(),
          supersedes: optionalString,
          summary: optionalString,
        })
        .loose(),
    ),
    _signature: signatureBlockSchema.optional(),
  })
  .loose();

/** Spec 002 "Feed file": every item has these members with these types. */
export const feedFileSchema = z
  .object({
    items: z.array(
      z
        .object({
          id: z.string().min(1),
          title: z.string(),
          url: z.string(),
          published: isoTime,
          category: z.string(),
          tags: z.array(z.string()),
          assertionType: z.string(),
          summary: z.string(),
          keyFacts: z.array(z.string()),
          relatedConcepts: z.array(z.string()),
        })
        .loose(),
    ),
    _signature: signatureBlockSchema.optional(),
  })
  .loose();

/** Spec 002 "Page manifest": specVersion, standard `ai-page-manifest`, pages with path, title, assertionType, contentHash, format. */
export const pageManifestSchema = z
  .object({
    specVersion: z.string(),
    standard: z.literal('ai-page-manifest'),
    pages: z.array(
      z
        .object({ path: z.string().min(1), title: z.string(), assertionType: z.string(), contentHash: z.string(), format: z.string() })
        .loose(),
    ),
    _signature: signatureBlockSchema.optional(),
  })
  .loose();

/** A knowledge section: an array of items, or an object wrapping them (spec 002: a glossary holds `assertionType` and a `terms` array). */
function section(item: z.ZodObject, wrapKeys: string[]) {
  const wrapped = z
    .object({ assertionType: optionalString, ...Object.fromEntries(wrapKeys.map((k) => [k, z.array(item).optional()])) })
    .loose();
  return z.union([z.array(item), wrapped]).optional();
}
const strings = z.array(z.string());

/** Spec 002 "Knowledge file": flexible; the recommended sections, when present, use the specification's keys and types. */
export const knowledgeFileSchema = z
  .object({
    summary: z
      .object({ assertionType: optionalString, oneLiner: optionalString, elevator: optionalString, forAI: optionalString })
      .loose()
      .optional(),
    glossary: section(
      z.object({ term: z.string().min(1), definition: z.string(), synonyms: strings.optional(), category: optionalString }).loose(),
      ['terms', 'items'],
    ),
    products: section(
      z.object({ name: z.string().min(1), description: optionalString, status: optionalString, features: strings.optional() }).loose(),
      ['items', 'products'],
    ),
    team: section(
      z
        .object({
          name: z.string().min(1),
          role: optionalString,
          bio: optionalString,
          expertise: z.union([z.string(), strings]).optional(),
        })
        .loose(),
      ['items', 'members'],
    ),
    partnerships: section(z.object({ partner: z.string().min(1), description: optionalString, focus: optionalString }).loose(), [
      'items',
      'partners',
    ]),
    // `sectors` item shape is not given (real files use objects).
    market: z
      .object({ assertionType: optionalString, size: optionalString, thesis: optionalString, sectors: z.array(z.unknown()).optional() })
      .loose()
      .optional(),
    technology: z.object({ assertionType: optionalString }).loose().optional(),
    _signature: signatureBlockSchema.optional(),
  })
  .loose();

export type ConformanceRole = 'knowledge' | 'feed' | 'archive' | 'pages' | 'query';

/**
 * Strict conformance of a companion file to spec 002, as `path: message` lines (empty when it conforms).
 * The query contract's shape is not given by the spec: it has no check.
 */
export function checkFileConformance(role: ConformanceRole, doc: unknown): string[] {
  const schema =
    role === 'archive'
      ? archiveFileSchema
      : role === 'feed'
        ? feedFileSchema
        : role === 'pages'
          ? pageManifestSchema
          : role === 'knowledge'
            ? knowledgeFileSchema
            : null;
  if (!schema) return [];
  const issues = [...issuesOf(schema.safeParse(doc)), ...tier3Issues(doc)];
  if (role === 'archive') {
    const d = doc as { _signature?: { digitalName?: unknown }; organization?: { digitalName?: unknown } };
    if (typeof d?._signature?.digitalName === 'string' && typeof d.organization?.digitalName !== 'string')
      issues.push('organization.digitalName: required from tier 3 (the archive is signed by a digitalName)');
  }
  return issues;
}

/** JSON Schema (2020-12) of the manifest, for publishing. */
export function discoveryManifestJsonSchema(id: string): Record<string, unknown> {
  return { $id: id, title: 'ai-discovery 1.1.1 manifest (Proofline)', ...z.toJSONSchema(discoveryManifestSchema) };
}
