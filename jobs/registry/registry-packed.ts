/**
 * The registry's packed per-company stores (issue 22): one JSON record per CIK holding every row a company route
 * reads (service/registry-layers: earnings, filings, timeline, people, profile facts and metrics), with the same
 * columns, order and origin leaves as the route's SQL, so an answer reads one record (a binary search and one
 * positioned read, lib/warehouse/packed-store.ts) instead of running 2-4 DuckDB queries. Written at publish after
 * the derive; on a delta publish only the changed CIKs' records are computed and the rest copied as bytes from the
 * previous snapshot's stores; with nothing changed the stores are hard-linked. Every record depends only on rows of
 * its own CIK (and their origin leaves), which is what the delta publish's key set tracks, except a profile's
 * affiliations (other companies' roles of its people) and `registry_person` (keyed by person, one record per
 * person id with the person's roles at every company, for /api/person): those widen the set (writeRegistryPacked).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadSql, queryRows } from '../../lib/warehouse/duckdb.ts';
import { textKeySql } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Store name → its SELECT (columns k = cik, v = JSON text). Names are read by service/registry-layers. */
export const REGISTRY_PACKED: Record<string, string> = {
  registry_earnings: loadSql('./packed-earnings.sql', import.meta.url),
  registry_filings: loadSql('./packed-filings.sql', import.meta.url),
  registry_timeline: loadSql('./packed-timeline.sql', import.meta.url),
  registry_people: loadSql('./packed-people.sql', import.meta.url),
  registry_profile: loadSql('./packed-profile.sql', import.meta.url),
  registry_person: loadSql('./packed-person.sql', import.meta.url),
  registry_identity: loadSql('./packed-identity.sql', import.meta.url),
  registry_tickers: loadSql('./packed-tickers.sql', import.meta.url),
};

/** A person's record id: the key of registry_person (service/registry-layers/person-names.sql computes the same). */
const PERSON_ID = '(hash(person_key) % 2147483647)::INTEGER';

/** A ticker's key in registry_tickers: `textKey(ticker)` (lib/warehouse/packed-store.ts), which service/company computes. */
const TICKER_KEY = textKeySql('ticker');

/**
 * `batch`: CIKs a batch aggregates at a time. DuckDB cannot spill the list/string_agg states a record is built
 * from, so a batch must fit the publish memory limit (1 GB) whole: one SELECT over every company ran out of it at
 * medium scale, and batches of 1,000 companies did at full scale (8,200 companies, the 2026-11-25 full ingest,
 * twice); batches of 250 published the full sample (407.8 s for the whole registry run). Tests lower it to cross
 * batches.
 */
export const packOptions = { batch: 250 };

/** Every CIK with rows in a table the stores read. */
const ALL_KEYS = ['filing_index', 'earnings_calendar', 'timeline', 'people', 'profile_facts', 'company_facts']
  .map((t) => `SELECT cik AS k FROM ${t} WHERE cik IS NOT NULL`)
  .join(' UNION ');

/**
 * The batches of one store: the sorted keys of `keysSql` in runs of `packOptions.batch`, each loaded into temp table
 * `_pack_keys` (which the store's SELECT reads) before its SELECT is copied.
 */
async function* batches(conn: DuckDBConnection, select: string, keysSql: string, size = packOptions.batch): AsyncIterable<string> {
  const keys = (await queryRows(conn, `SELECT DISTINCT k FROM (${keysSql}) WHERE k IS NOT NULL ORDER BY k`)).map((r) => Number(r.k));
  try {
    for (let i = 0; i < keys.length; i += size) {
      const slice = keys.slice(i, i + size);
      await conn.run(`CREATE OR REPLACE TEMP TABLE _pack_keys AS SELECT DISTINCT k FROM (${keysSql}) WHERE k BETWEEN $lo AND $hi`, {
        lo: slice[0]!,
        hi: slice[slice.length - 1]!,
      });
      yield select;
    }
  } finally {
    await conn.run('DROP TABLE IF EXISTS temp.main._pack_keys');
  }
}

/**
 * On a delta publish, before the derive replaces the changed companies' people rows: who sat where, so that the
 * affiliations of companies sharing a person with a changed company can be re-packed (writeRegistryPacked).
 */
export async function notePeopleBeforeDelta(conn: DuckDBConnection): Promise<void> {
  await conn.run('CREATE OR REPLACE TEMP TABLE _people_before AS SELECT DISTINCT cik, person_key FROM people');
  // And which tickers each company had: a ticker a changed company drops must leave registry_tickers.
  await conn.run('CREATE OR REPLACE TEMP TABLE _tickers_before AS SELECT DISTINCT cik, ticker FROM company_lookup');
}

/** Writes (full publish), merges (delta publish) or links (delta publish with nothing changed) every registry store. */
export async function writeRegistryPacked(conn: DuckDBConnection, ctx: DeriveContext): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  const delta = ctx.delta;
  for (const [name, select] of Object.entries(REGISTRY_PACKED)) {
    const t = Date.now();
    const allKeys =
      name === 'registry_person'
        ? `SELECT ${PERSON_ID} AS k FROM people WHERE person_key IS NOT NULL`
        : name === 'registry_identity'
          ? 'SELECT cik AS k FROM company_lookup'
          : name === 'registry_tickers'
            ? `SELECT ${TICKER_KEY} AS k FROM company_lookup`
            : ALL_KEYS;
    // Small records, larger batches (one COPY each): a ticker record is two short fields (20 × the companies'
    // batch), an identity record about 13 KB of JSON (8 ×: 2,000 companies, some 30 MB of aggregate state).
    const size =
      name === 'registry_tickers' ? packOptions.batch * 20 : name === 'registry_identity' ? packOptions.batch * 8 : packOptions.batch;
    if (!delta) await ctx.writePacked(name, batches(conn, select, allKeys, size));
    else if (delta.changed.size === 0 && (await ctx.linkPreviousPacked(name))) timings[`${name}_linked`] = 1;
    else {
      // A profile record also holds the company's affiliations, read from other companies' people rows: every
      // company sharing a person (before or after the change: _people_before) with a changed one is re-packed.
      // A person record holds the person's roles at every company: the ids of people with a role (before or after)
      // at a changed company are re-packed.
      const changedPeople = `SELECT person_key FROM people WHERE cik IN (SELECT k FROM ${delta.keysTable}) UNION SELECT person_key FROM _people_before WHERE cik IN (SELECT k FROM ${delta.keysTable})`;
      const changedSql =
        name === 'registry_profile'
          ? `SELECT k FROM ${delta.keysTable} UNION SELECT cik FROM people WHERE person_key IN (${changedPeople})`
          : name === 'registry_person'
            ? `SELECT ${PERSON_ID} AS k FROM (${changedPeople}) WHERE person_key IS NOT NULL`
            : name === 'registry_tickers'
              ? // The keys of every ticker a changed company has or had (_tickers_before): re-packed from all its tickers.
                `SELECT ${TICKER_KEY} AS k FROM (SELECT ticker FROM company_lookup WHERE cik IN (SELECT k FROM ${delta.keysTable}) UNION SELECT ticker FROM _tickers_before WHERE cik IN (SELECT k FROM ${delta.keysTable}))`
              : `SELECT k FROM ${delta.keysTable}`;
      const keys = new Set((await queryRows(conn, `SELECT DISTINCT k FROM (${changedSql}) WHERE k IS NOT NULL`)).map((r) => Number(r.k)));
      await ctx.writePackedDelta(name, batches(conn, select, changedSql, size), keys, batches(conn, select, allKeys, size));
    }
    timings[name] = Date.now() - t;
  }
  await conn.run('DROP TABLE IF EXISTS temp.main._people_before');
  await conn.run('DROP TABLE IF EXISTS temp.main._tickers_before');
  return timings;
}
