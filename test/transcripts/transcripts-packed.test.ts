/**
 * The transcripts domain's packed stores (issue 22; jobs/transcripts/transcripts-packed.ts): every transcript route
 * answers the same bytes from the packed records as from its SQL (the path a snapshot without the stores takes),
 * for every ticker, every type and topic filter and page, and the cross-company search for every filter, list and
 * page; with the stores an answer runs no DuckDB query (the plan guard of issue 22, no timing). Over the small
 * sample plus the real fixtures (call dates, Motley Fool, EarningsCall) when ../shared is present.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSample } from '../../jobs/sample.ts';
import { transcriptsSampleGenerator } from '../../ingest/transcripts/transcripts.sample.ts';
import { TRANSCRIPTS_PACKED } from '../../jobs/transcripts/transcripts-packed.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import {
  FACT_TOPICS,
  FACT_TYPES,
  getCompanyFacts,
  getCompanyTranscripts,
  searchTranscripts,
  type TranscriptQueryDeps,
} from '../../service/transcripts/transcripts.queries.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_SHARED } from '../helpers/shared.ts';
import { copyTranscriptFixtures, ingestTranscripts } from './transcripts-fixture.ts';
import { answer, counting, sqlOnly } from '../helpers/reader-variants.ts';

describe('transcripts packed stores', () => {
  let dir: string;
  let reader: SnapshotReader;
  let tickers: string[];
  const packed = (): TranscriptQueryDeps => ({ transcripts: reader });
  const sql = (): TranscriptQueryDeps => ({ transcripts: sqlOnly(reader) });

  beforeAll(async () => {
    dir = await tempDir('proofline-transcripts-packed-');
    const input = path.join(dir, 'input');
    await ensureSample(input, { scale: 'small', seed: 42, generators: [transcriptsSampleGenerator] });
    if (HAS_SHARED) await copyTranscriptFixtures(input);
    const config = testConfig(path.join(dir, 'data'));
    await ingestTranscripts(config, input);
    reader = await SnapshotReader.open(path.join(dir, 'data'), 'transcripts', { poolSize: 2 });
    tickers = (await reader.query(`SELECT DISTINCT ticker FROM transcripts ORDER BY ticker`)).map((r) => String(r.ticker));
  }, 180_000);
  afterAll(async () => {
    await reader?.close();
    await removeDir(dir);
  });

  it('publishes every store, one record per ticker with transcripts', async () => {
    expect(Object.keys(reader.manifest?.packed ?? {}).sort()).toEqual([...Object.keys(TRANSCRIPTS_PACKED), 'origin_leaves'].sort());
    expect(tickers.length).toBeGreaterThan(3);
    expect(reader.packed('transcripts_company')!.size).toBe(tickers.length);
    const [{ n }] = await reader.query(`SELECT count(*)::INTEGER AS n FROM transcript_facts`);
    expect(Number(n)).toBeGreaterThan(20);
  });

  it('answers every ticker, filter and page with the same bytes as the SQL path', async () => {
    let compared = 0;
    const unknown = ['ZZZZ', 'NOPE.X', '0000320193'];
    for (const t of [...tickers, ...unknown]) {
      const calls: Array<(d: TranscriptQueryDeps) => Promise<unknown>> = [
        (d) => getCompanyTranscripts(d, t),
        (d) => getCompanyTranscripts(d, t, { limit: 1 }),
        (d) => getCompanyFacts(d, t),
        (d) => getCompanyFacts(d, t, { limit: 2 }),
        (d) => getCompanyFacts(d, t, { limit: 500 }),
      ];
      for (const type of [undefined, ...FACT_TYPES])
        for (const topic of [undefined, ...FACT_TOPICS]) calls.push((d) => getCompanyFacts(d, t, { type, topic, limit: 3 }));
      for (const call of calls) {
        expect(await answer(() => call(packed())), t).toBe(await answer(() => call(sql())));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  }, 120_000);

  it('pages facts and transcripts with cursors as the SQL path does', async () => {
    const [{ ticker }] = await reader.query(`SELECT ticker FROM transcript_facts GROUP BY ticker ORDER BY count(*) DESC, ticker LIMIT 1`);
    let cursor: string | undefined;
    let pages = 0;
    do {
      const [a, b] = [
        await getCompanyFacts(packed(), String(ticker), { limit: 3, cursor }),
        await getCompanyFacts(sql(), String(ticker), { limit: 3, cursor }),
      ];
      expect(JSON.stringify(a)).toBe(JSON.stringify(b));
      cursor = (a.next_cursor as string | null) ?? undefined;
      pages++;
    } while (cursor && pages < 200);
    expect(pages).toBeGreaterThan(1);
  });

  it('answers the cross-company transcript search with the same bytes for every filter, list and page', async () => {
    let compared = 0;
    for (const topic of [undefined, ...FACT_TOPICS])
      for (const type of [undefined, ...FACT_TYPES])
        for (const opts of [
          {},
          { first: true },
          { limit: 2 },
          { category: 'facts' as const, limit: 7 },
          { category: 'companies' as const, limit: 1 },
        ]) {
          const q = { topic, type, ...opts };
          // Every page of the query (next walks the lists), up to 40.
          let cursor: string | undefined;
          let pages = 0;
          do {
            const [a, b] = [
              await answer(() => searchTranscripts(packed(), { ...q, cursor })),
              await answer(() => searchTranscripts(sql(), { ...q, cursor })),
            ];
            expect(a, JSON.stringify(q)).toBe(b);
            compared++;
            cursor = a.startsWith('{') ? ((JSON.parse(a).next_cursor as string | null) ?? undefined) : undefined;
            pages++;
          } while (cursor && pages < 40);
        }
    expect(compared).toBeGreaterThan(200);
  }, 120_000);

  it('walks the cross-company facts in pages of up to 500 rows (one block) as the SQL path does', async () => {
    const [{ n }] = await reader.query(`SELECT count(*)::INTEGER AS n FROM transcript_facts`);
    for (const limit of [300, 499, 500]) {
      let cursor: string | undefined;
      let seen = 0;
      do {
        const q = { category: 'facts' as const, limit, cursor };
        const [a, b] = [await answer(() => searchTranscripts(packed(), q)), await answer(() => searchTranscripts(sql(), q))];
        expect(a, `limit ${limit} after ${seen}`).toBe(b);
        const page = JSON.parse(a) as { facts: unknown[]; next_cursor: string | null };
        seen += page.facts.length;
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(seen).toBe(Number(n));
    }
  });

  it('runs no DuckDB query for an answer', async () => {
    const { reader: r, count } = counting(reader);
    const d: TranscriptQueryDeps = { transcripts: r };
    const t = tickers[0]!;
    const before = count();
    await getCompanyTranscripts(d, t);
    await getCompanyFacts(d, t, { topic: 'ai' });
    await getCompanyFacts(d, 'ZZZZ').catch(() => undefined);
    await searchTranscripts(d, { topic: 'ai' });
    await searchTranscripts(d, { type: 'metric', first: false, limit: 5 });
    await searchTranscripts(d, { first: true });
    expect(count() - before).toBe(0);
  });
});
