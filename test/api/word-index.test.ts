/**
 * The search word index must give exactly the containment scan's answer
 * (service/search/word-index.ts contract), on random texts and queries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitWords, WordIndex } from '../../service/search/word-index.ts';
import { tokenize } from '../../service/search/search.queries.ts';
import { rankCompanies, searchCompanyIndex, type IndexedCompany } from '../../service/search/company-index.ts';
import { indexTextDocs, searchEvents, searchPeople, type EventDoc, type PersonDoc } from '../../service/search/text-index.ts';

/** The company search as it was before its word index: an `includes` scan of every company's hay (the reference). */
function scanCompanies(index: IndexedCompany[], q: string, tokens: string[], limit: number, count: { total: number }) {
  return rankCompanies(
    index.filter((c) => tokens.every((t) => c.hay.includes(t))),
    q,
    tokens,
    limit,
    count,
  );
}

const text = fc
  .array(fc.constantFrom('a', 'b', 'c', 'é', '1', '&', '.', '-', "'", ' ', ',', '_', '/', 'ab', 'ca'), { maxLength: 30 })
  .map((a) => a.join(''));

describe('WordIndex.match', () => {
  it('returns the documents where every token is a substring of some field, ascending', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(text, { minLength: 1, maxLength: 3 }), { maxLength: 40 }),
        fc.array(text, { minLength: 1, maxLength: 3 }),
        (docs, queryParts) => {
          const lower = docs.map((fields) => fields.map((f) => f.toLowerCase()));
          const index = WordIndex.build(lower.length, (i) => lower[i]!);
          const tokens = tokenize(queryParts.join(' '));
          const expected =
            tokens.length === 0 ? [] : lower.flatMap((fields, i) => (tokens.every((t) => fields.some((f) => f.includes(t))) ? [i] : []));
          expect([...index.match(tokens)]).toEqual(expected);
          // Again, from the per-token cache, and each token's set alone (the union of its words).
          expect([...index.match(tokens)]).toEqual(expected);
          for (const t of tokens)
            expect([...index.match([t])]).toEqual(lower.flatMap((fields, i) => (fields.some((f) => f.includes(t)) ? [i] : [])));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('splits words on the same characters as the query tokenizer', () => {
    expect(splitWords("at&t's q3-2024 results, co._ltd / x")).toEqual(["at&t's", 'q3-2024', 'results', 'co.', 'ltd', 'x']);
    expect(tokenize("AT&T's Q3-2024 results, Co._Ltd / X")).toEqual(["at&t's", 'q3-2024', 'results', 'co.', 'ltd']);
  });

  it('finds the same ranked companies and total through the word index as the containment scan', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text, fc.boolean(), fc.option(fc.nat(50), { nil: null })), { maxLength: 40 }),
        fc.array(text, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 8 }),
        (rows, queryParts, limit) => {
          const index: IndexedCompany[] = rows.map(([name, extra, active, rank], i) => ({
            ticker: `T${i}`,
            cik: i,
            name,
            exchange: null,
            status: active ? 'active' : 'inactive',
            sic_description: null,
            rank,
            lname: name.toLowerCase(),
            hay: [`t${i}`, name, extra].join(' ').toLowerCase(),
          }));
          const q = queryParts.join(' ').trim().toLowerCase();
          const tokens = tokenize(q);
          if (tokens.length === 0) return;
          const [a, b] = [{ total: 0 }, { total: 0 }];
          expect(searchCompanyIndex(index, q, tokens, limit, a)).toEqual(scanCompanies(index, q, tokens, limit, b));
          expect(a.total).toBe(b.total);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('ranks the same people and events through the name and title indexes as the scan of every document (issue 22)', () => {
    const short = fc.constantFrom('ab', 'a', 'b c', 'ab c', 'ca', 'é', '', 'a-b');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(short, { minLength: 1, maxLength: 3 }), text), { maxLength: 40 }),
        fc.array(fc.tuple(short, text, fc.constantFrom('8-K', 'ab', 'c')), { maxLength: 40 }),
        fc.array(text, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 8 }),
        (personRows, eventRows, queryParts, limit) => {
          // People as the query gives them (unsorted; names repeat), events newest first (their order here).
          const people: PersonDoc[] = personRows.map(([names, notes], i) => ({
            name: names[0]!,
            person_cik: String(i),
            notes,
            tickers: [],
            roles: [],
            lnames: names.map((n) => n.toLowerCase()),
            lnotes: notes.toLowerCase(),
          }));
          const events: EventDoc[] = eventRows.map(([title, summary, type], i) => ({
            cik: i,
            accession: `a${i}`,
            event_type: type,
            title,
            summary,
            event_date: null,
            filing_date: null,
            document_url: null,
            ltitle: title.toLowerCase(),
            lsummary: summary.toLowerCase(),
            sort_date: '',
          }));
          const q = queryParts.join(' ').trim().toLowerCase();
          const tokens = tokenize(q);
          if (tokens.length === 0) return;
          const asQueried = [...people];
          const ix = indexTextDocs(events, people);
          const counts = [{ total: 0 }, { total: 0 }, { total: 0 }, { total: 0 }];
          const scanPeople = searchPeople(asQueried, q, tokens, limit, undefined, counts[0]);
          expect(searchPeople(ix.people, q, tokens, limit, ix.peopleWords, counts[1], ix.peopleNameWords)).toEqual(scanPeople);
          expect(counts[1]!.total).toBe(counts[0]!.total);
          const scanEvents = searchEvents(events, q, tokens, limit, undefined, counts[2]);
          expect(searchEvents(ix.events, q, tokens, limit, ix.eventWords, counts[3], ix.eventTitleWords)).toEqual(scanEvents);
          expect(counts[3]!.total).toBe(counts[2]!.total);
        },
      ),
      { numRuns: 600 },
    );
  });
});
