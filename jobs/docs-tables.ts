/**
 * Tables of the docs that are rendered from code, so they cannot drift from it:
 * the risk-rule table (docs/fmcsa-risk-model.md, from `RISK_RULES`) and the
 * configuration table (docs/configuration.md, from the zod `configSchema`).
 *
 * Each table sits in its doc between a marker pair,
 * `<!-- generated:NAME -->` … `<!-- /generated:NAME -->`; everything between the
 * markers belongs to the generator. `npm run docs:tables` rewrites the blocks
 * (jobs/cli/docs-tables.cli.ts); test/docs/generated-tables.test.ts fails when a
 * committed block differs from what the code renders.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { configSchema } from '../lib/config.ts';
import { InvalidInputError } from '../lib/errors.ts';
import { RISK_MODEL_VERSION, RISK_RULES, type Atom, type RiskRule, type Severity } from '../ingest/fmcsa/risk-model.ts';

export interface GeneratedTable {
  /** Marker name: `<!-- generated:NAME -->`. */
  name: string;
  /** Doc holding the block, relative to the repository root. */
  file: string;
  /** Where the table comes from (named in drift messages). */
  source: string;
  /** Written before each marker, for files whose comments are not HTML (`# ` in .env.example). */
  markerPrefix?: string;
  render(): string;
}

/** Markdown cell text: pipes escaped, line breaks flattened. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** A rule threshold as people write it: 31.080000000000002 → 31.08. */
function formatNumber(n: number): string {
  return String(Number(n.toFixed(6)));
}

function formatAtom([feature, op, operand]: Atom): string {
  let right: string;
  if (typeof operand === 'number') right = formatNumber(operand);
  else if (typeof operand === 'string') right = operand;
  else right = operand.times && operand.times !== 1 ? `${operand.ref} * ${formatNumber(operand.times)}` : operand.ref;
  return `\`${feature} ${op} ${right}\``;
}

const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low'];

/** The risk-rule table: one row per rule of `rules`, in evaluation order, plus the weight range per severity. */
export function renderRiskRuleTable(rules: readonly RiskRule[] = RISK_RULES, version = RISK_MODEL_VERSION): string {
  const rows = rules.map(
    (r) => `| \`${r.code}\` | ${r.severity} | ${r.weight} | ${r.when.map(formatAtom).join(' and ')} | ${cell(r.why)} |`,
  );
  const ranges = SEVERITIES.flatMap((sev) => {
    const w = rules.filter((r) => r.severity === sev).map((r) => r.weight);
    if (w.length === 0) return [];
    const lo = Math.min(...w);
    const hi = Math.max(...w);
    return [`${sev} ${lo === hi ? lo : `${lo}-${hi}`} (${w.length} rule${w.length === 1 ? '' : 's'})`];
  });
  return [
    `Model \`${version}\`, ${rules.length} rules, in the order red flags are listed. Weights by severity: ${ranges.join(', ')}.`,
    '',
    '| code | severity | weight | fires when | why |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
};

function describeAccepted(s: JsonSchema): string {
  if (s.enum) {
    const values = s.enum.filter((v) => v !== '');
    if (values.includes('1') && values.includes('true')) return 'flag: `1`, `true`, `yes` on; `0`, `false`, `no` off';
    return values.map((v) => `\`${String(v)}\``).join(', ');
  }
  if (s.type === 'integer' || s.type === 'number') {
    const noun = s.type === 'integer' ? 'integer' : 'number';
    const max = s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER ? s.maximum : undefined;
    if (s.exclusiveMinimum !== undefined) return `${noun} > ${s.exclusiveMinimum}`;
    if (s.minimum !== undefined && max !== undefined) return `${noun} ${s.minimum}-${max}`;
    if (s.minimum !== undefined) return `${noun} ≥ ${s.minimum}`;
    return noun;
  }
  if (s.format === 'uri') return 'URL';
  return 'text';
}

function describeDefault(s: JsonSchema): string {
  if (s.default === undefined) return 'unset';
  if (s.default === '') return 'empty';
  return `\`${String(s.default)}\``;
}

/** Variables of `schema` that carry no `.describe()` text. */
export function undescribedConfigVariables(schema: z.ZodObject = configSchema): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => !(field as z.ZodType).description)
    .map(([name]) => name);
}

/** The configuration table: one row per variable of the zod schema, in schema order. */
export function renderConfigTable(schema: z.ZodObject = configSchema): string {
  const rows = Object.entries(schema.shape).map(([name, field]) => {
    const s = z.toJSONSchema(field as z.ZodType, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    return `| \`${name}\` | ${cell(describeDefault(s))} | ${cell(describeAccepted(s))} | ${cell(s.description ?? '')} |`;
  });
  return ['| variable | default | accepts | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export const GENERATED_TABLES: readonly GeneratedTable[] = [
  {
    name: 'risk-rules',
    file: 'docs/fmcsa-risk-model.md',
    source: 'RISK_RULES in ingest/fmcsa/risk-model.ts',
    render: () => renderRiskRuleTable(),
  },
  { name: 'config', file: 'docs/configuration.md', source: 'configSchema in lib/config.ts', render: () => renderConfigTable() },
  {
    name: 'env-example',
    file: '.env.example',
    source: 'configSchema in lib/config.ts',
    markerPrefix: '# ',
    render: () => renderEnvExample(),
  },
];

/**
 * The variables of `.env.example` (compose's `env_file`): every variable of the schema, commented out at its default
 * (so a copy changes nothing until a line is uncommented), with its meaning and what it accepts.
 */
export function renderEnvExample(schema: z.ZodObject = configSchema): string {
  return Object.entries(schema.shape)
    .map(([name, field]) => {
      const s = z.toJSONSchema(field as z.ZodType, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
      const value = s.default === undefined ? '' : String(s.default);
      const about = `${s.description ?? ''} Accepts: ${describeAccepted(s).replace(/`/g, '')}.`.replace(/\s+/g, ' ').trim();
      return `# ${about}\n# ${name}=${value}`;
    })
    .join('\n\n');
}

function markers(name: string, prefix = ''): { open: string; close: string } {
  return { open: `${prefix}<!-- generated:${name} -->`, close: `${prefix}<!-- /generated:${name} -->` };
}

/** The text between a marker pair (without the line breaks next to the markers), or null when the doc lacks the pair. */
export function readGeneratedBlock(doc: string, name: string, prefix = ''): string | null {
  const { open, close } = markers(name, prefix);
  const start = doc.indexOf(open);
  const end = doc.indexOf(close, start + open.length);
  if (start < 0 || end < 0) return null;
  return doc
    .slice(start + open.length, end)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

/** `doc` with the block between the `name` markers replaced by `body`. Throws when the markers are missing. */
export function replaceGeneratedBlock(doc: string, name: string, body: string, prefix = ''): string {
  const { open, close } = markers(name, prefix);
  const start = doc.indexOf(open);
  const end = doc.indexOf(close, start + open.length);
  if (start < 0 || end < 0) throw new InvalidInputError(`the doc has no ${open} … ${close} marker pair`, { parameter: name });
  return `${doc.slice(0, start + open.length)}\n${body}\n${doc.slice(end)}`;
}

export interface TableCheck {
  table: GeneratedTable;
  /** Absolute path of the doc. */
  file: string;
  /** What the code renders. */
  expected: string;
  /** What the doc holds between the markers (null: no markers). */
  actual: string | null;
}

/** Renders every generated table and reads what its doc holds now. */
export async function checkGeneratedTables(root: string, tables: readonly GeneratedTable[] = GENERATED_TABLES): Promise<TableCheck[]> {
  return Promise.all(
    tables.map(async (table) => {
      const file = path.join(root, table.file);
      const doc = await readFile(file, 'utf8');
      return { table, file, expected: table.render(), actual: readGeneratedBlock(doc, table.name, table.markerPrefix) };
    }),
  );
}

/** Rewrites every block that differs from its render; returns the docs it changed (relative paths). */
export async function writeGeneratedTables(root: string, tables: readonly GeneratedTable[] = GENERATED_TABLES): Promise<string[]> {
  const changed: string[] = [];
  for (const table of tables) {
    const file = path.join(root, table.file);
    const doc = await readFile(file, 'utf8');
    const next = replaceGeneratedBlock(doc, table.name, table.render(), table.markerPrefix);
    if (next !== doc) {
      await writeFile(file, next);
      changed.push(table.file);
    }
  }
  return changed;
}
