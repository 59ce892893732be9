/**
 * What every MCP tool is made of, and the rules that make its contract
 * portable (issue 23; the MCP Inspector's `--strict` schema lint):
 *
 * - input: a strict zod object (unknown arguments are a tool error), every
 *   argument `.describe()`d, enums where values are enumerable;
 * - output: a zod object of the real fields; objects stay open (new fields are
 *   additions, never breaks) and are published as `{"type": "object"}`
 *   without an untyped `additionalProperties: {}`;
 * - nulls: fields without a value are omitted from `structuredContent`
 *   (`omitNulls`), so output types need no `[X, "null"]` unions. Objects
 *   whose bytes are hashed or signed (origin leaves, receipts, signed records)
 *   travel verbatim, nulls included, or their hashes would not recompute;
 *   their nullable fields are `anyOf` branches of one type each.
 */
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';

export interface ToolContext {
  deps: ServiceDeps;
  /** Credit API key from the /mcp request's Authorization header (plc_...), if any. */
  apiKey: string | null;
}

/**
 * Which limits a call counts against, for the one metering rule shared with
 * REST (the hardening work maps these onto the tiers): `registry` reads use
 * the registry's tiers; `lookup` carrier reads are unlimited per the vetting
 * specification (abuse guard only); `vetting` spends a credit.
 */
export type ToolMeter = 'registry' | 'lookup' | 'vetting';

export interface ToolDef {
  name: string;
  title: string;
  /** One line a model can act on; the first sentence is the summary listed in /.well-known/ai and /llms.txt. */
  description: string;
  input: z.ZodType<Record<string, unknown>>;
  output: z.ZodObject;
  annotations: {
    readOnlyHint: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint: boolean;
  };
  meter: ToolMeter;
  // biome-ignore lint/suspicious/noExplicitAny: the arguments are the tool's own `input` output, checked before `run`.
  run(ctx: ToolContext, args: any): Promise<Record<string, unknown>>;
}

/** Annotations of a tool that only reads the published snapshots. */
export const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/** True for objects whose exact bytes are hashed or signed: an origin leaf, a receipt, a signed record. */
function isVerbatim(o: Record<string, unknown>): boolean {
  return (typeof o.leaf_hash === 'string' && 'canon' in o && 'alg' in o) || 'signature' in o;
}

/**
 * Drops null-valued (and undefined) fields (deeply), except inside hashed or signed objects, which are returned as
 * they are. What holds no such field is returned as it is, not copied (issue 22: the copy of every answer was a
 * fair share of what an MCP call allocates): a plain array or plain object is copied only from its first member
 * that changes. Any other object (a class instance) is copied into a plain object as before, and so is an object
 * with an own `__proto__` member (which the copy drops), so the JSON of the result is the same either way.
 */
export function omitNulls(v: unknown): unknown {
  if (!v || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      const y = omitNulls(x);
      if (out) out[i] = y;
      else if (y !== x) {
        out = new Array(v.length);
        for (let j = 0; j < i; j++) out[j] = v[j];
        out[i] = y;
      }
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  if (isVerbatim(o)) return o;
  const proto = Object.getPrototypeOf(o);
  const keys = Object.keys(o);
  let copy = proto !== Object.prototype && proto !== null;
  let out: Record<string, unknown> | undefined;
  // Own enumerable keys in order, as Object.entries, without an array per member (this runs over every answer).
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    const y = x === null || x === undefined ? undefined : omitNulls(x);
    if (!copy && (y !== x || x === undefined || k === '__proto__')) copy = true;
    if (copy && !out) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]!] = o[keys[j]!];
    }
    if (out && y !== undefined) out[k] = y;
  }
  return out ?? (copy ? {} : o);
}

/** JSON Schema of a tool's input (as accepted) or output, in the portable spelling described above. */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [k: string]: unknown } {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return portable(json) as { type: 'object'; [k: string]: unknown };
}

function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    // An open object: `additionalProperties: {}` (zod's spelling of "anything") is an untyped schema to the lint; absent means the same.
    if (k === 'additionalProperties' && v && typeof v === 'object' && Object.keys(v).length === 0) continue;
    // zod's safe-integer bounds on every int say nothing a client needs.
    if ((k === 'minimum' && v === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER)) continue;
    out[k] = portable(v);
  }
  // `type: [X, "null"]` (zod's spelling of a nullable scalar) becomes anyOf branches of one type each.
  if (Array.isArray(out.type)) {
    const { type, description, title, ...rest } = out;
    return {
      ...(title === undefined ? {} : { title }),
      ...(description === undefined ? {} : { description }),
      anyOf: (type as string[]).map((t) => ({ type: t, ...rest })),
    };
  }
  return out;
}

// ---- shared output pieces ----

export const str = z.string();
export const int = z.number().int();
export const num = z.number();
export const bool = z.boolean();
/** An open object: the listed fields are typed, others may be added. */
export const obj = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape);
/** A row whose columns are the table's (free-form object). */
export const row = z.looseObject({});
/** CIK: digits as a string per the registry specification; the number is still accepted while both spellings are served. */
export const cikOut = z.union([z.string().regex(/^\d+$/), z.number().int()]);
const hex64 = z.string().regex(/^[a-f0-9]{64}$/);
const nullableStr = z.union([z.string(), z.null()]);

/** An origin leaf, verbatim (nulls included): its leaf_hash recomputes over exactly these nine fields. */
export const originLeaf = obj({
  leaf_hash: hex64,
  alg: z.literal('sha256'),
  canon: z.literal('rfc8785'),
  kind: str,
  source: str,
  source_url: nullableStr,
  retrieved_at: nullableStr,
  content_sha256: nullableStr,
  record_sha256: nullableStr,
  parent: nullableStr,
});

/**
 * The identity card's origin: by default `{leaf_hash, source}` (the card stays near 200 tokens, spec 000 layer 0);
 * with `detail: "full"` the whole leaf (these two fields and the seven others of originLeaf). sec_verify takes the hash.
 */
export const originRef = obj({ leaf_hash: hex64, source: str });

/** A signed verification receipt (Ed25519 over RFC 8785 JSON of the receipt without `signature`), verbatim. */
export const receipt = obj({
  leaf_hash: hex64,
  found: bool,
  verified_at: str,
  nonce: str,
  prev_nonce: nullableStr,
  prev_receipt_hash: nullableStr,
  key_id: str,
  signature: str,
});

// ---- shared inputs ----

export const tickerArg = z.string().trim().min(1).max(20).describe('company ticker (AAPL, BRK-B) or SEC CIK (320193 or 0000320193)');
