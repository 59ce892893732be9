/**
 * `proofline eval` (alias `npm run eval`): extraction precision and recall on the real filings corpus
 * against the committed development set (jobs/eval/extraction-eval.ts, labels in
 * test/eval/labels/, rules in docs/signal-labelling-rules.md). Prints the
 * figures per signal type, 8-K event type and profile field, every false hit
 * and miss (file, section, sentence), writes bench/results/eval.json, and
 * exits 1 when a metric is below its target (or below the accepted floor of a
 * type served with its measured precision, test/eval/floors.json).
 *
 * Options: `--corpus DIR` (default ../shared/fixtures/sec/corpus),
 * `--out FILE` (default bench/results/eval.json), `--quiet` (no finding list).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkTargets, evaluateExtraction, type Score } from '../eval/extraction-eval.ts';
import { UsageError } from './cli-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export async function runEval(opts: { corpus?: string; out?: string; quiet?: boolean }): Promise<number> {
  const corpus = path.resolve(
    opts.corpus ?? path.join(process.env.PROOFLINE_SHARED_DIR ?? path.join(root, '..', 'shared'), 'fixtures', 'sec', 'corpus'),
  );
  const out = path.resolve(opts.out ?? path.join(root, 'bench', 'results', 'eval.json'));
  if (!existsSync(corpus)) throw new UsageError(`corpus not found: ${corpus} (pass --corpus DIR)`);
  const floorsFile = path.join(root, 'test', 'eval', 'floors.json');
  const floors: Record<string, number> = existsSync(floorsFile) ? (JSON.parse(readFileSync(floorsFile, 'utf8')).floors ?? {}) : {};

  const r = evaluateExtraction(corpus);
  const fmt = (s: Score) => `P ${s.precision.toFixed(3)}  R ${s.recall.toFixed(3)}  (tp ${s.tp}, fp ${s.fp}, fn ${s.fn})`;
  console.log(
    `corpus ${corpus}: ${r.counts.ten_k} 10-Ks, ${r.counts.eight_k_filings} 8-Ks, ${r.counts.signal_sentences} labelled signal sentences (${r.counts.signal_hit_sentences} hits)\n`,
  );
  console.log('signals (per filing, section, type)');
  for (const [t, s] of Object.entries(r.signals))
    console.log(`  ${t.padEnd(18)} ${fmt(s)}  strength agreement ${s.strength_agreement ?? '-'}`);
  console.log('signal sentences (each labelled sentence alone; informational)');
  for (const [t, s] of Object.entries(r.signal_sentences)) console.log(`  ${t.padEnd(18)} ${fmt(s)}`);
  console.log('8-K events (per filing and item)');
  for (const [t, s] of Object.entries(r.events)) console.log(`  ${t.padEnd(22)} ${fmt(s)}`);
  console.log(`product launches         ${fmt(r.product_launch)}`);
  console.log('profile facts');
  console.log(`  employees              ${fmt(r.profile.employees)}`);
  console.log(`  executive_officers     ${fmt(r.profile.executive_officers)}`);
  if (!opts.quiet) {
    console.log(`\nfindings (${r.findings.length})`);
    for (const f of r.findings)
      console.log(
        `  ${f.kind.padEnd(12)} ${f.file}${f.section ? ` Item ${f.section}` : ''}: ${f.what}${f.detail ? ` [${f.detail}]` : ''}${f.sentence ? `\n               "${f.sentence}"` : ''}`,
      );
  }
  const targets = checkTargets(r, floors);
  const failed = targets.filter((t) => !t.ok);
  const accepted = targets.filter((t) => t.ok && t.value < t.min);
  console.log(
    `\ntargets: ${targets.length - failed.length}/${targets.length} met${accepted.length ? ` (${accepted.length} below target but at or above the accepted floor: ${accepted.map((t) => `${t.metric} ${t.value}`).join(', ')})` : ''}`,
  );
  for (const t of failed) console.log(`  BELOW  ${t.metric} = ${t.value} (min ${t.accepted_floor ?? t.min})`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ measured_at: new Date().toISOString(), ...r, corpus: path.relative(root, corpus), targets }, null, 1)}\n`,
  );
  console.log(`wrote ${path.relative(root, out)}`);
  return failed.length ? 1 : 0;
}
