/**
 * The chain heads store built from the children's tails parts (jobs/quotes/quotes-fold.ts TAIL_PARTS: each chain's
 * newest 31 bars, and the chain parts' first dates and day counts) is the store built from every bar of quote_bars, line
 * for line (issue 22 item 3: reading every bar again was most of publish). Chains longer and shorter than 31 days, a
 * one-day chain, raw and adjusted chains of one ticker, a file whose rows are not in key order, several files.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { quoteHeadsOptions, quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { readCurrentPointer } from '../../lib/warehouse/snapshot.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { writeInput } from './quotes-fixture.ts';

const HEADER = 'timestamp,symbol,open,high,low,close,volume,vwap,trade_count';
const DAILY_HEADER = 'Date,symbol,Open,High,Low,Close,Volume,Trades,VWAP';

/** `days` weekdays of bars of `ticker` from 2024-01-02 as CSV lines of the SDK (raw) or daily (adjusted) layout. */
function linesOf(ticker: string, days: number, daily: boolean, seed: number): string[] {
  const out: string[] = [];
  for (let day = Date.UTC(2024, 0, 2), d = 0; d < days; day += 86_400_000) {
    if ([0, 6].includes(new Date(day).getUTCDay())) continue;
    const close = Number((10 + seed * 3.17 + d * 0.13 + (d % 7) * 0.011).toFixed(4));
    const ts = `${new Date(day).toISOString().slice(0, 10)} 05:00:00+00:00`;
    const [o, h, l, v, vw, n] = [
      close - 0.1,
      close + 0.5,
      close - 0.5,
      1000 + d * 3,
      Number((close - 0.05).toFixed(6)),
      d % 4 === 0 ? '' : 10 + d,
    ];
    out.push(daily ? `${ts},${ticker},${o},${h},${l},${close},${v},${n},${vw}` : `${ts},${ticker},${o},${h},${l},${close},${v},${vw},${n}`);
    d++;
  }
  return out;
}

describe('chain heads from the tails parts', () => {
  let dir: string;
  const stores = new Map<string, { lines: string[]; plan: string[] }>();

  beforeAll(async () => {
    dir = await tempDir('quote-heads-tails-');
    const input = path.join(dir, 'input');
    // Disjoint (ticker, adjustment) ranges, so the fast path keeps the files in key order: (AAA, raw), (AAA,
    // split_dividend), (ABC, raw), (BBB, raw) to (BEE, raw).
    await writeInput(input, 'raw/a.csv', `${HEADER}\n${linesOf('AAA', 45, false, 1).join('\n')}\n`);
    await writeInput(input, 'raw/c.csv', `${HEADER}\n${linesOf('ABC', 31, false, 2).join('\n')}\n`);
    // Rows out of key order within the file (the child sorts), a one-day chain and a 30-day chain.
    const shuffled = [...linesOf('BBB', 70, false, 3), ...linesOf('BCD', 1, false, 4), ...linesOf('BEE', 30, false, 5)].reverse();
    await writeInput(input, 'raw/b.csv', `${HEADER}\n${shuffled.join('\n')}\n`);
    await writeInput(input, 'adjusted/a.csv', `${DAILY_HEADER}\n${linesOf('AAA', 40, true, 6).join('\n')}\n`);
    const savedBatch = quoteHeadsOptions.batch;
    for (const fromTails of [true, false]) {
      const msgs: string[] = [];
      const log = pino({ level: 'info' }, { write: (s: string) => void msgs.push(JSON.parse(s).msg as string) });
      const config = testConfig(path.join(dir, `data-${fromTails}`));
      quoteHeadsOptions.fromTails = fromTails;
      // From the tails in batches of two tickers (the bars' store in one), so the batches' seams are compared too.
      if (fromTails) quoteHeadsOptions.batch = 2;
      try {
        const report = await runPipelineInProcess(quotesPipeline, { config, log, inputDir: input, force: true, backoffMs: 1 });
        expect(report.failed_children).toBe(0);
      } finally {
        quoteHeadsOptions.fromTails = true;
        quoteHeadsOptions.batch = savedBatch;
      }
      const ptr = (await readCurrentPointer(config.dataDir, 'quotes'))!;
      const text = await readFile(path.join(snapshotDir(config.dataDir, 'quotes', ptr.snapshot_id), 'packed', 'quote_heads.tsv'), 'utf8');
      stores.set(String(fromTails), {
        lines: text.split('\n').filter(Boolean).sort(),
        plan: msgs.filter((m) => m.startsWith('quotes derive: plan') || m.startsWith('quotes derive: chain heads')),
      });
    }
  }, 120_000);
  afterAll(async () => {
    await removeDir(dir);
  });

  it('reads the tails on the fast path in key order, and every bar otherwise', () => {
    const tails = stores.get('true')!.plan.join('\n');
    expect(tails).toMatch(/plan: per-file folds \(disjoint per-file chains\)/);
    expect(tails).toMatch(/chain heads \(5 tickers, from tails\)/);
    expect(stores.get('false')!.plan.join('\n')).toMatch(/chain heads \(5 tickers\)$/m);
  });

  it('writes the same store line for line', () => {
    const fromTails = stores.get('true')!.lines;
    const fromBars = stores.get('false')!.lines;
    expect(fromTails.length).toBe(6); // key 0 and five tickers
    expect(fromTails).toEqual(fromBars);
    // The long chains keep their whole span and day count, not the tail's.
    const aaa = JSON.parse(fromTails.find((l) => l.includes('"ticker":"AAA"'))!.split('\t')[1]!);
    expect(aaa.chains.map((c: { days: number; tail: unknown[] }) => [c.days, c.tail.length]).sort()).toEqual([
      [40, 30],
      [45, 30],
    ]);
  });
});
