/**
 * The docs' generated tables match the code they are rendered from: the
 * risk-rule table (RISK_RULES) and the configuration table (configSchema).
 * A rule, weight or variable changed without `npm run docs:tables` fails here.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RISK_RULES } from '../../ingest/fmcsa/risk-model.ts';
import {
  GENERATED_TABLES,
  checkGeneratedTables,
  readGeneratedBlock,
  renderConfigTable,
  renderRiskRuleTable,
  replaceGeneratedBlock,
  undescribedConfigVariables,
} from '../../jobs/docs-tables.ts';
import { configSchema } from '../../lib/config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('generated doc tables', () => {
  it.each(GENERATED_TABLES.map((t) => [t.name, t] as const))('the %s table in its doc is what the code renders', async (_name, table) => {
    const [check] = await checkGeneratedTables(root, [table]);
    if (check!.actual === null) {
      expect.fail(`${table.file} has no <!-- generated:${table.name} --> … <!-- /generated:${table.name} --> marker pair`);
    }
    if (check!.actual !== check!.expected) {
      expect.fail(
        `${table.file}: the generated "${table.name}" table is out of date with ${table.source}; run \`npm run docs:tables\` and commit the result`,
      );
    }
  });

  it('every configuration variable carries a description for the table', () => {
    expect(undescribedConfigVariables(), 'add .describe() to these fields of configSchema in lib/config.ts').toEqual([]);
  });

  it('lists every risk rule with its severity, weight and condition', () => {
    const table = renderRiskRuleTable();
    for (const rule of RISK_RULES) expect(table).toContain(`| \`${rule.code}\` | ${rule.severity} | ${rule.weight} |`);
    expect(table).toContain('`bipd_required_k > 0` and `bipd_required_k > bipd_on_file_k`');
    expect(table).toContain('`vehicle_oos_rate > 31.08`');
  });

  it('a changed weight changes the rendered table', () => {
    const changed = RISK_RULES.map((r, i) => (i === 0 ? { ...r, weight: r.weight + 1 } : r));
    expect(renderRiskRuleTable(changed)).not.toBe(renderRiskRuleTable());
  });

  it('renders defaults, accepted values and descriptions of the schema', () => {
    const table = renderConfigTable(
      z.object({
        PORT: z.coerce.number().int().min(0).max(65535).default(8787).describe('where it listens'),
        MODE: z.enum(['a', 'b']).default('a').describe('a | b'),
        KEY: z.string().optional().describe('secret'),
      }),
    );
    expect(table.split('\n').slice(2)).toEqual([
      '| `PORT` | `8787` | integer 0-65535 | where it listens |',
      '| `MODE` | `a` | `a`, `b` | a \\| b |',
      '| `KEY` | unset | text | secret |',
    ]);
    expect(renderConfigTable()).toContain(
      `| \`SEC_RATE_LIMIT\` | \`9\` | integer 1-10 | ${configSchema.shape.SEC_RATE_LIMIT.description} |`,
    );
  });

  it('replaces only the text between a marker pair, and refuses a doc without one', () => {
    const doc = 'intro\n<!-- generated:t -->\nold\n<!-- /generated:t -->\noutro\n';
    const next = replaceGeneratedBlock(doc, 't', 'new');
    expect(next).toBe('intro\n<!-- generated:t -->\nnew\n<!-- /generated:t -->\noutro\n');
    expect(readGeneratedBlock(next, 't')).toBe('new');
    expect(readGeneratedBlock(doc, 'other')).toBeNull();
    expect(() => replaceGeneratedBlock(doc, 'other', 'x')).toThrow(/generated:other/);
  });
});
