/**
 * Shared by the MCP suites: the official SDK client in process (fetch =
 * app.fetch, no port), a JSON Schema check of structuredContent against the
 * tool's published outputSchema (the SDK's own Ajv provider), origin-leaf
 * recomputation, and the MCP Inspector's `--strict` schema-portability lint.
 *
 * The lint is a transcription of `@modelcontextprotocol/inspector` 2.12.0
 * (clients/cli, core/json/schemaLint.ts): the Inspector CLI needs Node >= 22.19
 * and this project runs on Node 20, so CI runs these same rules instead:
 * boolean-schema (error): a bare true/false where a schema object is expected
 *   (allowed only as additionalProperties / unevaluatedProperties / additionalItems / unevaluatedItems);
 * type-union (warning): `type` given as an array;
 * remote-ref (warning): a `$ref` outside the document;
 * untyped-schema (warning): a schema with no constraining keyword (accepts anything).
 * `--strict` fails on errors; issue 23 asks for no warning either, so `lintTools` returns both.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { H3 } from 'h3';
import { hashCanonical } from '../../lib/hash.ts';

export async function connectClient(app: H3, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'proofline-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://proofline.test/mcp'), {
    fetch: async (u, i) => app.fetch(new Request(u, i)),
    requestInit: { headers },
  });
  await c.connect(transport);
  return c;
}

export type ToolResult = {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content: Array<{ type: string; text?: string }>;
};

const ajv = new AjvJsonSchemaValidator();
/** Problems of `value` against a JSON Schema (empty when valid). */
export function schemaProblems(schema: Record<string, unknown>, value: unknown): string[] {
  const r = ajv.getValidator(schema as never)(value);
  return r.valid ? [] : [r.errorMessage ?? 'invalid'];
}

/** Every origin leaf in `v` (objects with leaf_hash, alg and canon), deeply. */
export function leavesIn(v: unknown, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (Array.isArray(v)) for (const x of v) leavesIn(x, out);
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.leaf_hash === 'string' && o.alg === 'sha256' && o.canon === 'rfc8785') out.push(o);
    else for (const x of Object.values(o)) leavesIn(x, out);
  }
  return out;
}

/** True when the leaf's hash recomputes: SHA-256 of RFC 8785 JSON of the leaf without leaf_hash. */
export function leafRecomputes(leaf: Record<string, unknown>): boolean {
  const { leaf_hash, ...rest } = leaf;
  return hashCanonical(rest) === leaf_hash;
}

export interface LintFinding {
  tool: string;
  rule: 'boolean-schema' | 'type-union' | 'remote-ref' | 'untyped-schema';
  severity: 'error' | 'warning';
  path: string;
}

const BOOLEAN_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);
const SUB = [
  'items',
  'contains',
  'not',
  'propertyNames',
  'if',
  'then',
  'else',
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
  'contentSchema',
];
const SUB_ARRAY = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUB_MAP = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];
const CONSTRAINING = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'items',
  'prefixItems',
  'contains',
  'additionalItems',
  'unevaluatedItems',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'dependentSchemas',
  'dependencies',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
]);

function lintSchema(tool: string, node: unknown, path: string, keyword: string | undefined, out: LintFinding[], depth = 0): void {
  if (depth > 64) return;
  if (typeof node === 'boolean') {
    if (keyword === undefined || !BOOLEAN_VALUED.has(keyword)) out.push({ tool, rule: 'boolean-schema', severity: 'error', path });
    return;
  }
  if (!node || typeof node !== 'object' || Array.isArray(node)) return;
  const n = node as Record<string, unknown>;
  if (Array.isArray(n.type)) out.push({ tool, rule: 'type-union', severity: 'warning', path });
  if (typeof n.$ref === 'string' && n.$ref !== '' && !n.$ref.startsWith('#'))
    out.push({ tool, rule: 'remote-ref', severity: 'warning', path });
  const constrains = Object.keys(n).some((k) => CONSTRAINING.has(k)) || ('if' in n && ('then' in n || 'else' in n));
  if (!constrains && keyword !== 'not') out.push({ tool, rule: 'untyped-schema', severity: 'warning', path });
  for (const k of SUB_MAP) {
    const m = n[k];
    if (m && typeof m === 'object' && !Array.isArray(m))
      for (const [name, sub] of Object.entries(m)) lintSchema(tool, sub, `${path}.${k}.${name}`, k, out, depth + 1);
  }
  for (const k of SUB_ARRAY) {
    const arr = n[k];
    if (Array.isArray(arr)) for (const [i, sub] of arr.entries()) lintSchema(tool, sub, `${path}.${k}[${i}]`, k, out, depth + 1);
  }
  for (const k of SUB) {
    if (!(k in n)) continue;
    const v = n[k];
    if (k === 'items' && Array.isArray(v))
      for (const [i, sub] of v.entries()) lintSchema(tool, sub, `${path}.items[${i}]`, k, out, depth + 1);
    else lintSchema(tool, v, `${path}.${k}`, k, out, depth + 1);
  }
}

/** The Inspector's --strict findings for a tools/list result. */
export function lintTools(tools: Array<{ name: string; inputSchema?: unknown; outputSchema?: unknown }>): LintFinding[] {
  const out: LintFinding[] = [];
  for (const t of tools) {
    if (t.inputSchema !== undefined) lintSchema(t.name, t.inputSchema, 'inputSchema', undefined, out);
    if (t.outputSchema !== undefined) lintSchema(t.name, t.outputSchema, 'outputSchema', undefined, out);
  }
  return out;
}
