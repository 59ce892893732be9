/**
 * The EDGAR daily increment of the registry fetch step (EDGAR_DAILY_INDEX).
 *
 * Each run walks the daily index `Archives/edgar/daily-index/{YYYY}/QTR{n}/master.{YYYYMMDD}.idx` for every day
 * after the cursor, keeps the rows of the forms the registry reads (EDGAR_DAILY_FORMS) filed by a company of the
 * universe, and plans the download of each filing's complete submission `.txt` (SGML header with the acceptance
 * time, and every document of the filing). The cursor (the last day walked) is kept with the warehouse: it is
 * written into the published registry snapshot's manifest (`meta.edgar_daily.through`), so it advances only when
 * the run that fetched those days is published, and a new warehouse starts at EDGAR_DAILY_SINCE.
 *
 * Days and holidays without filings have no index (404): such a day more than two days before EDGAR_DAILY_UNTIL is
 * passed; a missing index of the last two days is not yet published (it appears in the evening, Eastern time) and
 * the walk stops before it, to ask again on the next run. An index that is not one (an HTML page served with
 * status 200) is a rejected file, with its URL and line, and the walk stops before it too: nothing of that day is
 * read, and the cursor stays before it.
 *
 * Reruns download only what is missing: an index already on disk (complete, with its sidecar) is read from disk,
 * a filing already on disk is not fetched again (a filing never changes once accepted), and the saved indexes of
 * the EDGAR_DAILY_RECHECK_DAYS days before the cursor are read again (from disk) for filings an earlier night
 * failed to fetch. A filing the SEC answers 404 for is reported and marked (`<file>.404.json`), never parsed.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../lib/config.ts';
import { NotFoundError, ParseError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { parseEdgarIndex, type IndexEntry } from '../../ingest/edgar/edgar-index.ts';
import { isFetchedWhole } from '../fetched-file.ts';
import type { EdgarClient } from './edgar-client.ts';
import { writeWithSidecar } from './edgar-client.ts';

/** Key of the registry manifest's `meta` that holds the daily-index cursor. */
export const DAILY_META_KEY = 'edgar_daily';
export { isFetchedWhole };

/** One filing the walk wants on disk. */
export interface DailyFiling {
  cik: number;
  accession: string;
  form: string;
  /** URL path of the complete submission (`/Archives/edgar/data/{cik}/{accession}.txt`, from the index row). */
  url_path: string;
  day: string;
}

export interface DailyWalk {
  /** The cursor after this walk: the last day read (or passed as a day without filings); null when none yet. */
  through: string | null;
  /** Days whose index was requested from the SEC in this walk. */
  requested: string[];
  /** Days read (index on disk or fetched), passed (no index), or where the walk stopped. */
  days: Array<{ day: string; status: 'fetched' | 'on-disk' | 'no-index' | 'not-yet-published' | 'rejected' | 'recheck' }>;
  /** Universe filings of the forms kept, by accession (first index row wins), in index order. */
  filings: DailyFiling[];
  /** CIKs that filed on a day after the old cursor (their submissions JSON is fetched). */
  filers: Set<number>;
  /** CIKs with a new 10-K or 10-Q (or amendment) after the old cursor (their companyfacts is fetched). */
  factFilers: Set<number>;
  rejects: Array<{ file: string; reason: string }>;
}

/** `YYYY-MM-DD` plus `n` days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

function quarterParts(day: string): { y: string; q: number; compact: string } {
  const [y, m, d] = day.split('-');
  return { y: y!, q: Math.ceil(Number(m) / 3), compact: `${y}${m}${d}` };
}

/** URL path of a day's master index. */
export function dailyIndexUrlPath(day: string): string {
  const { y, q, compact } = quarterParts(day);
  return `/Archives/edgar/daily-index/${y}/QTR${q}/master.${compact}.idx`;
}

/** Where a day's master index is kept: `<secDir>/index/daily/{YYYY}/QTR{n}/master.{YYYYMMDD}.idx` (read by the `index` step). */
export function dailyIndexFile(secDir: string, day: string): string {
  const { y, q, compact } = quarterParts(day);
  return path.join(secDir, 'index', 'daily', y, `QTR${q}`, `master.${compact}.idx`);
}

/** Where a filing's complete submission is kept: `<secDir>/filings/{cik}/{acc-no-dashes}/{accession}.txt` (read by the `documents` step). */
export function filingFile(secDir: string, cik: number, accession: string): string {
  return path.join(secDir, 'filings', String(cik), accession.replace(/-/g, ''), `${accession}.txt`);
}

/** The marker of a filing the SEC answered 404 for: not asked for again, never parsed. */
export function missingMarker(file: string): string {
  return `${file}.404.json`;
}

/** The cursor kept with the warehouse: `meta.edgar_daily.through` of the current registry snapshot. */
export async function readDailyCursor(dataDir: string): Promise<string | null> {
  const m = await readCurrentManifest(dataDir, 'registry');
  const through = (m?.meta?.[DAILY_META_KEY] as { through?: unknown } | undefined)?.through;
  return typeof through === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(through) ? through : null;
}

/** The forms of EDGAR_DAILY_FORMS. */
export function dailyForms(config: Pick<Config, 'EDGAR_DAILY_FORMS'>): Set<string> {
  return new Set(
    config.EDGAR_DAILY_FORMS.split(',')
      .map((f) => f.trim().toUpperCase())
      .filter(Boolean),
  );
}

/**
 * Walks the daily index from the day after `cursor` (or `since`) through `until` (see the module comment).
 * `universe` null keeps every filer.
 */
export async function walkDailyIndex(
  client: EdgarClient,
  opts: {
    secDir: string;
    cursor: string | null;
    since?: string;
    until: string;
    recheckDays: number;
    universe: Set<number> | null;
    forms: Set<string>;
    runId: string;
    log: Logger;
    signal?: AbortSignal;
  },
): Promise<DailyWalk> {
  const walk: DailyWalk = {
    through: opts.cursor,
    requested: [],
    days: [],
    filings: [],
    filers: new Set(),
    factFilers: new Set(),
    rejects: [],
  };
  const seen = new Set<string>();
  const keep = (rows: IndexEntry[], isNew: boolean, day: string) => {
    for (const r of rows) {
      if (!r.accession || !opts.forms.has(r.form.toUpperCase())) continue;
      if (opts.universe && !opts.universe.has(r.cik)) continue;
      if (isNew) {
        walk.filers.add(r.cik);
        if (/^10-[KQ]/i.test(r.form)) walk.factFilers.add(r.cik);
      }
      if (seen.has(r.accession)) continue;
      seen.add(r.accession);
      walk.filings.push({ cik: r.cik, accession: r.accession, form: r.form, url_path: `/Archives/${r.file_name}`, day });
    }
  };
  const parse = (bytes: Buffer, file: string): IndexEntry[] | ParseError => {
    try {
      return parseEdgarIndex(bytes, file).rows;
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      // A day whose index has the header and no rows is a day without filings, not a bad file.
      if (/header but no rows/.test(e.message)) return [];
      return e;
    }
  };

  // Days up to the cursor: only the indexes saved on disk, for filings an earlier night did not get.
  if (opts.cursor) {
    for (let day = addDays(opts.cursor, 1 - opts.recheckDays); day <= opts.cursor; day = addDays(day, 1)) {
      const file = dailyIndexFile(opts.secDir, day);
      if (!existsSync(file)) continue;
      const rows = parse(await readFile(file), file);
      if (rows instanceof ParseError) continue;
      keep(rows, false, day);
      walk.days.push({ day, status: 'recheck' });
    }
  }

  const first = opts.cursor ? addDays(opts.cursor, 1) : (opts.since ?? addDays(opts.until, -1));
  const settled = addDays(opts.until, -2);
  // Days of the last two without an index yet: passed once a later day has one (indexes appear in day order).
  let pending: string[] = [];
  for (let day = first; day <= opts.until; day = addDays(day, 1)) {
    const file = dailyIndexFile(opts.secDir, day);
    const urlPath = dailyIndexUrlPath(day);
    let bytes: Buffer;
    let fetched: Awaited<ReturnType<EdgarClient['get']>> | null = null;
    if (await isFetchedWhole(file)) {
      bytes = await readFile(file);
    } else {
      walk.requested.push(day);
      try {
        fetched = await client.get(client.www, urlPath, opts.signal);
        bytes = fetched.bytes;
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
        if (day <= settled) {
          walk.days.push({ day, status: 'no-index' });
          walk.through = day;
        } else {
          pending.push(day);
        }
        continue;
      }
    }
    const rows = parse(bytes, file);
    if (rows instanceof ParseError) {
      const where = rows.context.line != null ? ` (line ${rows.context.line})` : '';
      walk.rejects.push({ file: client.www.url(urlPath), reason: `${rows.message}${where}` });
      walk.days.push({ day, status: 'rejected' });
      opts.log.warn(
        { day, url: client.www.url(urlPath), reason: rows.message },
        'EDGAR daily index rejected: the walk stops before this day',
      );
      pending = [];
      break;
    }
    if (fetched) await writeWithSidecar(file, fetched, { run_id: opts.runId });
    for (const d of pending) walk.days.push({ day: d, status: 'no-index' });
    pending = [];
    walk.days.push({ day, status: fetched ? 'fetched' : 'on-disk' });
    walk.through = day;
    keep(rows, true, day);
  }
  for (const d of pending) walk.days.push({ day: d, status: 'not-yet-published' });
  return walk;
}
