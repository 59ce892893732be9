/**
 * Shape checks and lenient normalisation of discovery documents. Real files
 * drift from spec 1.1.1 (object-valued `standard`, `version` for
 * `specVersion`, `concepts` for `coreConcepts`, boolean capabilities, v1.2
 * paths under /.well-known/ai/…): each drift becomes a warning, never an
 * exception. Look-alikes (the IETF draft document at the same path, text files
 * behind rel="ai-discovery") fail `checkManifestShape` and are skipped.
 */

export const SPEC_VERSION = '1.1.1-draft';
export const SCHEMA_VERSION = '2026-02';
/** The capability keys of spec 002, plus `pages` (the signed page manifest "is advertised in capabilities"). */
export const CAPABILITY_NAMES = ['knowledge', 'feed', 'query', 'mcp', 'archive', 'pages'] as const;
export type CapabilityName = (typeof CAPABILITY_NAMES)[number];

export interface Capability {
  available: boolean;
  /** Absolute URL, or null when none was declared. */
  url: string | null;
  auth: string | null;
  rateLimit: string | null;
  languages: string[];
  safety: string | null;
}

export interface NormalizedManifest {
  specVersion: string | null;
  schemaVersion: string | null;
  standard: string | null;
  generated: string | null;
  organization: { name: string | null; domain: string | null; mission: string | null; sector: string[] };
  coreConcepts: { term: string; definition: string }[];
  capabilities: Partial<Record<CapabilityName, Capability>>;
  /** URL of the page manifest (`capabilities.pages.url`; legacy: an object-valued `pages.url`), when declared. */
  pagesUrl: string | null;
  /** The site map (`pages` array): path, title and purpose of each page. */
  siteMap: { path: string; title: string | null; purpose: string | null }[];
}

export type ShapeCheck = { ok: true; warnings: string[] } | { ok: false; reason: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

/**
 * Whether `doc` is an ai-discovery manifest: a JSON object with a version
 * (`specVersion`, or legacy `version`) and an `organization` object with a
 * name or domain. Anything else (arrays, the IETF draft, text) is refused
 * with a reason.
 */
export function checkManifestShape(doc: unknown): ShapeCheck {
  if (!isObj(doc)) return { ok: false, reason: 'not a JSON object' };
  const warnings: string[] = [];
  const version = str(doc.specVersion) ?? str(doc.version);
  if (!version) return { ok: false, reason: 'no specVersion (not an ai-discovery manifest)' };
  if (!str(doc.specVersion)) warnings.push('uses "version" instead of "specVersion"');
  if (!isObj(doc.organization) || !(str(doc.organization.name) || str(doc.organization.domain)))
    return { ok: false, reason: 'no organization{name|domain} (not an ai-discovery manifest)' };
  if (doc.standard === undefined) warnings.push('no "standard" member');
  else if (isObj(doc.standard)) warnings.push('"standard" is an object, spec 1.1.1 requires the string "ai-discovery"');
  else if (doc.standard !== 'ai-discovery') return { ok: false, reason: `standard is ${JSON.stringify(doc.standard)}, not "ai-discovery"` };
  return { ok: true, warnings };
}

function warnIfV12(url: string, where: string, warnings: string[]): void {
  if (/\/\.well-known\/ai\/(knowledge|feed|content|archive)\b/.test(url))
    warnings.push(`${where} uses a v1.2-style path (${new URL(url).pathname})`);
}

function resolveUrl(v: unknown, base: string): string | null {
  const s = str(v);
  if (!s) return null;
  try {
    return new URL(s, base).href;
  } catch {
    return null;
  }
}

/** Normalises a manifest that passed `checkManifestShape`, collecting a warning for every drift from 1.1.1. */
export function normalizeManifest(doc: Record<string, unknown>, baseUrl: string, warnings: string[]): NormalizedManifest {
  const org = isObj(doc.organization) ? doc.organization : {};
  const sector = Array.isArray(org.sector)
    ? org.sector.filter((s): s is string => typeof s === 'string')
    : typeof org.sector === 'string'
      ? [org.sector]
      : [];
  if (!Array.isArray(org.sector)) warnings.push('organization.sector is not an array');
  let conceptsRaw: unknown = doc.coreConcepts;
  if (conceptsRaw === undefined && doc.concepts !== undefined) {
    warnings.push('uses "concepts" instead of "coreConcepts"');
    conceptsRaw = doc.concepts;
  }
  if (conceptsRaw === undefined) warnings.push('no coreConcepts');
  const coreConcepts = (Array.isArray(conceptsRaw) ? conceptsRaw : [])
    .map((c) =>
      isObj(c)
        ? { term: str(c.term) ?? str(c.name) ?? '', definition: str(c.definition) ?? str(c.description) ?? '' }
        : typeof c === 'string'
          ? { term: c, definition: '' }
          : null,
    )
    .filter((c): c is { term: string; definition: string } => c !== null && c.term !== '');

  const capabilities: Partial<Record<CapabilityName, Capability>> = {};
  const caps = isObj(doc.capabilities) ? doc.capabilities : {};
  for (const name of CAPABILITY_NAMES) {
    let raw: unknown = caps[name];
    if (raw === undefined && typeof caps[`${name}_available`] === 'boolean') raw = caps[`${name}_available`];
    // Legacy top-level links (`knowledge: {url}`, `feed: {url}`) beside the capabilities object.
    const legacy = isObj(doc[name]) ? (doc[name] as Record<string, unknown>) : null;
    if (raw === undefined && legacy?.url) {
      warnings.push(`capability ${name} taken from legacy top-level "${name}" link`);
      raw = { available: true, url: legacy.url };
    }
    if (raw === undefined) continue;
    if (typeof raw === 'boolean') {
      warnings.push(`capabilities.${name} is a boolean, not {available, url, …}`);
      const url = resolveUrl(legacy?.url, baseUrl);
      if (url) warnIfV12(url, `${name}.url`, warnings);
      capabilities[name] = { available: raw, url, auth: null, rateLimit: null, languages: [], safety: null };
      continue;
    }
    if (!isObj(raw)) {
      warnings.push(`capabilities.${name} has an unusable value`);
      continue;
    }
    if (typeof raw.available !== 'boolean') warnings.push(`capabilities.${name}.available is not a boolean`);
    const url = resolveUrl(raw.url ?? raw.endpoint, baseUrl);
    if (url) warnIfV12(url, `capabilities.${name}.url`, warnings);
    capabilities[name] = {
      available: raw.available === true || (raw.available === undefined && url !== null),
      url,
      auth: str(raw.auth),
      rateLimit: str(raw.rateLimit) ?? (typeof raw.rateLimit === 'number' ? String(raw.rateLimit) : null),
      languages: Array.isArray(raw.languages) ? raw.languages.filter((l): l is string => typeof l === 'string') : [],
      safety: str(raw.safety) ?? (isObj(raw.safety) ? JSON.stringify(raw.safety) : null),
    };
  }
  for (const k of Object.keys(caps))
    if (!(CAPABILITY_NAMES as readonly string[]).includes(k) && !/_available$/.test(k)) warnings.push(`unknown capability "${k}" ignored`);

  let pagesUrl = capabilities.pages?.available ? capabilities.pages.url : null;
  if (!pagesUrl && isObj(doc.pages)) {
    pagesUrl = resolveUrl(doc.pages.url, baseUrl);
    if (pagesUrl)
      warnings.push(
        '"pages" is an object pointing at the page manifest; spec 002 makes it the site map array and advertises the page manifest in capabilities',
      );
  }
  const siteMap = (Array.isArray(doc.pages) ? doc.pages : [])
    .filter((p): p is Record<string, unknown> => isObj(p) && str(p.path) !== null)
    .map((p) => ({ path: p.path as string, title: str(p.title), purpose: str(p.purpose) }));
  if (doc.humanReadable !== undefined && typeof doc.humanReadable !== 'string') warnings.push('"humanReadable" is not a string (a link)');

  const specVersion = str(doc.specVersion) ?? str(doc.version);
  if (specVersion && !/^1\.1\.1(-draft)?$/.test(specVersion)) warnings.push(`specVersion ${specVersion} is not 1.1.1; read leniently`);
  const schemaVersion = str(doc.schemaVersion);
  if (schemaVersion !== SCHEMA_VERSION)
    warnings.push(`schemaVersion is ${JSON.stringify(doc.schemaVersion ?? null)}, expected "${SCHEMA_VERSION}"`);
  const generated = str(doc.generated) ?? str(doc.lastUpdated) ?? str(doc.updated);
  if (!str(doc.generated)) warnings.push('no "generated" timestamp');
  return {
    specVersion,
    schemaVersion,
    standard: typeof doc.standard === 'string' ? doc.standard : isObj(doc.standard) ? 'ai-discovery (object form)' : null,
    generated,
    organization: { name: str(org.name), domain: str(org.domain), mission: str(org.mission), sector },
    coreConcepts,
    capabilities,
    pagesUrl,
    siteMap,
  };
}
