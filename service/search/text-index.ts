/**
 * In-memory search indexes of people and timeline events, built once per
 * registry snapshot (lazily, on the first search) and dropped when the
 * snapshot changes. A search scans them with per-field `includes` (every
 * token must be in some field) and keeps the top N (events are pre-sorted
 * newest first, so common words stop early), so it never waits for a DuckDB connection and its cost is flat
 * (DuckDB scans measured 10-70 ms per query on the shared 2-core machine,
 * and they compete with every other endpoint for the read pool).
 * Tables absent from the snapshot give empty indexes; a table above
 * MAX_ROWS is not loaded (empty results, logged) to bound memory.
 */
import { personNotes } from '../registry-layers/registry-layers.queries.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { snapshotSchema } from '../../lib/warehouse/snapshot-schema.ts';
import { WordIndex } from './word-index.ts';

export const MAX_ROWS = 2_000_000;

export interface EventDoc {
  cik: number;
  accession: string;
  event_type: string;
  title: string;
  summary: string | null;
  event_date: string | null;
  filing_date: string | null;
  document_url: string | null;
  ltitle: string;
  lsummary: string;
  sort_date: string;
}

/** One person (one person_key): `name` is the most recent spelling, `lnames` every spelling lower-cased (a 10-K list and Form 4 may differ). */
export interface PersonDoc {
  name: string;
  person_cik: string | null;
  notes: string | null;
  tickers: string[];
  roles: string[];
  lnames: string[];
  lnotes: string;
}

export interface TextIndexes {
  events: EventDoc[];
  /** Sorted by `name` (a stable sort of the query's rows: people of one name keep their order). */
  people: PersonDoc[];
  /** Words of each event's title, summary and type (ids = positions in `events`). */
  eventWords: WordIndex;
  /** Words of each event's title alone: the events whose title may contain the whole query. */
  eventTitleWords: WordIndex;
  /** Words of each person's name and notes (ids = positions in `people`). */
  peopleWords: WordIndex;
  /** Words of each person's names alone: the people one of whose names may contain the whole query. */
  peopleNameWords: WordIndex;
}

const cache = new WeakMap<SnapshotReader, { snapshot: string; index: Promise<TextIndexes> }>();

async function countRows(reader: SnapshotReader, table: 'timeline' | 'people'): Promise<number> {
  const rows = await reader.query(
    table === 'timeline' ? /* sql */ `SELECT count(*) AS n FROM timeline` : /* sql */ `SELECT count(*) AS n FROM people`,
  );
  return Number(rows[0]?.n ?? 0);
}

async function build(reader: SnapshotReader): Promise<TextIndexes> {
  const schema = await snapshotSchema(reader);
  const tl = schema.get('timeline');
  const pp = schema.get('people');
  const hasEvents = !!tl && ['cik', 'accession', 'event_type', 'title'].every((c) => tl.has(c));
  const hasPeople = !!pp && ['person_key', 'person_name'].every((c) => pp.has(c));
  const hasNotes = !!pp?.has('notes');
  const interned = new Map<string, string>();
  const intern = (s: string) => {
    let v = interned.get(s);
    if (v === undefined) interned.set(s, (v = s));
    return v;
  };
  const [eventRows, peopleRows] = await Promise.all([
    // Each arm is its own async function, so a rejection in one is never left unhandled while the other awaits.
    (async () =>
      hasEvents && (await countRows(reader, 'timeline')) <= MAX_ROWS
        ? reader.query(
            /* sql */ `SELECT cik, accession, event_type, title, summary, CAST(event_date AS VARCHAR) AS event_date, CAST(filing_date AS VARCHAR) AS filing_date, document_url FROM timeline`,
          )
        : [])(),
    (async () =>
      hasPeople && (await countRows(reader, 'people')) <= MAX_ROWS
        ? reader.query(/* sql */ `SELECT arg_max(person_name, coalesce(last_seen, DATE '1900-01-01')) AS name, list(DISTINCT person_name ORDER BY person_name) AS names,
                 min(CAST(person_cik AS VARCHAR)) AS person_cik,
                 ${hasNotes ? 'min(notes)' : 'NULL'} AS stored_notes,
                 list(role ORDER BY role) AS all_roles,
                 list(DISTINCT company_name ORDER BY company_name) FILTER (WHERE company_name IS NOT NULL) AS companies,
                 list(source_kind) AS sources,
                 list(DISTINCT ticker ORDER BY ticker) FILTER (WHERE ticker IS NOT NULL) AS tickers,
                 list(DISTINCT role ORDER BY role) AS roles
               FROM people GROUP BY person_key`)
        : [])(),
  ]);
  const events: EventDoc[] = eventRows.map((r) => {
    const title = intern(String(r.title));
    const summary = (r.summary as string | null) ?? null;
    return {
      cik: Number(r.cik),
      accession: String(r.accession),
      event_type: intern(String(r.event_type)),
      title,
      summary,
      event_date: (r.event_date as string | null) ?? null,
      filing_date: (r.filing_date as string | null) ?? null,
      document_url: (r.document_url as string | null) ?? null,
      ltitle: intern(title.toLowerCase()),
      lsummary: summary ? summary.toLowerCase() : '',
      sort_date: String(r.event_date ?? r.filing_date ?? ''),
    };
  });
  // Newest first, so a search can stop as soon as it holds `limit` whole-query title matches.
  events.sort((a, b) =>
    a.sort_date !== b.sort_date
      ? a.sort_date > b.sort_date
        ? -1
        : 1
      : a.accession !== b.accession
        ? a.accession < b.accession
          ? -1
          : 1
        : a.event_type < b.event_type
          ? -1
          : a.event_type > b.event_type
            ? 1
            : 0,
  );
  // Spec 000: people match on name or notes. Notes are the text /api/person/{name} shows (personNotes), or the
  // table's own notes column where a snapshot has one.
  const people: PersonDoc[] = peopleRows.map((r) => {
    const notes =
      (r.stored_notes as string | null) ??
      personNotes({
        roles: ((r.all_roles as unknown[] | null) ?? []).map(String),
        companies: ((r.companies as unknown[] | null) ?? []).map(String),
        sources: ((r.sources as unknown[] | null) ?? []).map(String),
      });
    return {
      name: String(r.name),
      person_cik: (r.person_cik as string | null) ?? null,
      notes,
      tickers: (r.tickers as string[] | null) ?? [],
      roles: (r.roles as string[] | null) ?? [],
      lnames: ((r.names as string[] | null) ?? [String(r.name)]).map((n) => n.toLowerCase()),
      lnotes: notes.toLowerCase(),
    };
  });
  return indexTextDocs(events, people);
}

/**
 * The word indexes of `events` (sorted newest first by the caller) and `people` (sorted here by name, stably: people
 * of one name keep their order, so that searchPeople's ranking of the people matched by notes alone, one score, then
 * by name, then by position, is their id order; issue 22).
 */
export function indexTextDocs(events: EventDoc[], people: PersonDoc[]): TextIndexes {
  people.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const eventWords = WordIndex.build(events.length, (i) => [events[i]!.ltitle, events[i]!.lsummary, events[i]!.event_type]);
  const eventTitleWords = WordIndex.build(events.length, (i) => [events[i]!.ltitle]);
  const peopleWords = WordIndex.build(people.length, (i) => [...people[i]!.lnames, people[i]!.lnotes]);
  const peopleNameWords = WordIndex.build(people.length, (i) => people[i]!.lnames);
  return { events, people, eventWords, eventTitleWords, peopleWords, peopleNameWords };
}

/** The indexes of the reader's current snapshot (built on first use). */
export function textIndexes(reader: SnapshotReader): Promise<TextIndexes> {
  const id = reader.manifest?.snapshot_id ?? '';
  const c = cache.get(reader);
  if (c && c.snapshot === id) return c.index;
  const index = build(reader);
  cache.set(reader, { snapshot: id, index });
  index.catch(() => cache.delete(reader));
  return index;
}

/** Keeps the best `limit` items by `better` (a strict ordering), with one bounded insertion per match. */
function topN<T>(limit: number, better: (a: T, b: T) => boolean) {
  const out: T[] = [];
  return {
    offer(x: T) {
      if (out.length === limit && !better(x, out[out.length - 1]!)) return;
      let i = out.length;
      while (i > 0 && better(x, out[i - 1]!)) i--;
      out.splice(i, 0, x);
      if (out.length > limit) out.pop();
    },
    items: out,
  };
}

/**
 * Timeline events with every token in the title, summary or event type;
 * title matches of the whole query (60) before other matches (30), newest
 * first. `events` is sorted newest first, so the scan stops once it holds
 * `limit` title matches.
 */
export function searchEvents(
  events: EventDoc[],
  q: string,
  tokens: string[],
  limit: number,
  words?: WordIndex,
  count?: { total: number },
  titleWords?: WordIndex,
): Array<{ doc: EventDoc; score: number }> {
  if (words && titleWords) return searchEventsByTitle(events, q, tokens, limit, words, titleWords, count);
  const hi: Array<{ doc: EventDoc; score: number }> = [];
  const lo: Array<{ doc: EventDoc; score: number }> = [];
  // With the word index only the matching events are visited (same order, same answer as the scan).
  const ids = words?.match(tokens);
  const n = ids ? ids.length : events.length;
  let matched = 0;
  outer: for (let k = 0; k < n; k++) {
    const e = events[ids ? ids[k]! : k]!;
    if (!ids) for (const t of tokens) if (!e.ltitle.includes(t) && !e.lsummary.includes(t) && !e.event_type.includes(t)) continue outer;
    matched++;
    if (e.ltitle.includes(q)) {
      hi.push({ doc: e, score: 60 });
      // Without a count to make, stop once `limit` whole-query title matches are held; with the word index every
      // visited event matches, so the count is the number of ids.
      if (hi.length >= limit && (!count || ids)) break;
    } else if (lo.length < limit) lo.push({ doc: e, score: 30 });
  }
  if (count) count.total = ids ? ids.length : matched;
  return hi.concat(lo).slice(0, limit);
}

/**
 * searchEvents with both word indexes: the same answer without testing the title of every match. The title matches
 * of the whole query are among the events with every token in the title (`titleWords`, a subset of `words`' ids:
 * ascending, as the scan visits them): the first `limit` of them are the scan's `hi`. Only when they are fewer than
 * `limit` are the others needed: the first matches (by `words`, in order) whose title does not contain the query.
 */
function searchEventsByTitle(
  events: EventDoc[],
  q: string,
  tokens: string[],
  limit: number,
  words: WordIndex,
  titleWords: WordIndex,
  count?: { total: number },
): Array<{ doc: EventDoc; score: number }> {
  const ids = words.match(tokens);
  if (count) count.total = ids.length;
  const out: Array<{ doc: EventDoc; score: number }> = [];
  const titled = titleWords.match(tokens);
  for (let k = 0; k < titled.length && out.length < limit; k++) {
    const e = events[titled[k]!]!;
    if (e.ltitle.includes(q)) out.push({ doc: e, score: 60 });
  }
  for (let k = 0; k < ids.length && out.length < limit; k++) {
    const e = events[ids[k]!]!;
    if (!e.ltitle.includes(q)) out.push({ doc: e, score: 30 });
  }
  return out;
}

/** The best of a person's names for the whole query: exact 100, prefix 80, contains 60, else 30. */
function personScore(p: PersonDoc, q: string): number {
  let score = 30;
  for (const n of p.lnames) score = Math.max(score, n === q ? 100 : n.startsWith(q) ? 80 : n.includes(q) ? 60 : 30);
  return score;
}

/**
 * People with every token in a name (or notes); the best of their names: exact 100, prefix 80, contains the query 60,
 * else 30; ranked by score, then name, then position. With `nameWords` (the word index of the names alone; `people`
 * sorted by name, as textIndexes builds them) the same answer without scoring every match: the people scoring above
 * 30 (a name contains the query, so every token is in their names) are found through `nameWords` and ranked; the
 * rest all score 30, so their ranking is their id order, and only the first few are taken.
 */
export function searchPeople(
  people: PersonDoc[],
  q: string,
  tokens: string[],
  limit: number,
  words?: WordIndex,
  count?: { total: number },
  nameWords?: WordIndex,
): Array<{ doc: PersonDoc; score: number }> {
  if (words && nameWords) {
    const ids = words.match(tokens);
    if (count) count.total = ids.length;
    const named: Array<{ doc: PersonDoc; score: number; id: number }> = [];
    const byName = nameWords.match(tokens);
    for (let k = 0; k < byName.length; k++) {
      const id = byName[k]!;
      const score = personScore(people[id]!, q);
      if (score > 30) named.push({ doc: people[id]!, score, id });
    }
    named.sort((a, b) => b.score - a.score || (a.doc.name < b.doc.name ? -1 : a.doc.name > b.doc.name ? 1 : a.id - b.id));
    const out: Array<{ doc: PersonDoc; score: number }> = named.slice(0, limit).map(({ doc, score }) => ({ doc, score }));
    if (out.length < limit) {
      const isNamed = new Set(named.map((x) => x.id));
      for (let k = 0; k < ids.length && out.length < limit; k++) if (!isNamed.has(ids[k]!)) out.push({ doc: people[ids[k]!]!, score: 30 });
    }
    return out;
  }
  const top = topN<{ doc: PersonDoc; score: number }>(limit, (a, b) => (a.score !== b.score ? a.score > b.score : a.doc.name < b.doc.name));
  const ids = words?.match(tokens);
  const n = ids ? ids.length : people.length;
  let matched = 0;
  outer: for (let k = 0; k < n; k++) {
    const p = people[ids ? ids[k]! : k]!;
    if (!ids) for (const t of tokens) if (!p.lnames.some((n) => n.includes(t)) && !p.lnotes.includes(t)) continue outer;
    matched++;
    top.offer({ doc: p, score: personScore(p, q) });
  }
  if (count) count.total = matched;
  return top.items;
}
