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

export const discoveryManifestSchema = z
  .object({
    specVersion: z.string().regex(/^1\.1\.1(-draft)?$/, 'specVersion must be 1.1.1 or 1.1.1-draft'),
    schemaVersion: z.literal('2026-02'),
    standard: z.literal('ai-discovery'),
    generated: isoTime,
    organization: z
      .object({ name: z.string().min(1), domain: z.string().min(1), mission: z.string().min(1), sector: z.array(z.string().min(1)).min(1) })
      .loose(),
    coreConcepts: z.array(z.object({ term: z.string().min(1), definition: z.string().min(1) }).loose()),
    capabilities: z
      .object({ knowledge: capability, feed: capability, query: capability, mcp: capability, archive: capability })
      .partial()
      .loose()
      .optional(),
    _signature: signatureBlockSchema.optional(),
  })
  .loose();

/** Strict conformance of a manifest to spec 1.1.1: the issues as `path: message` lines (empty when it conforms). */
export function checkManifestConformance(doc: unknown): string[] {
  const r = discoveryManifestSchema.safeParse(doc);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
}

/** JSON Schema (2020-12) of the manifest, for publishing. */
export function discoveryManifestJsonSchema(id: string): Record<string, unknown> {
  return { $id: id, title: 'ai-discovery 1.1.1 manifest (Proofline)', ...z.toJSONSchema(discoveryManifestSchema) };
}
