/**
 * The search word index must give exactly the containment scan's answer
 * (service/search/word-index.ts contract), on random texts and queries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitWords, WordIndex } from '../../service/search/word-index.ts';
import { tokenize } from '../../service/search/search.queries.ts';

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
        },
      ),
      { numRuns: 400 },
    );
  });

  it('splits words on the same characters as the query tokenizer', () => {
    expect(splitWords("at&t's q3-2024 results, co._ltd / x")).toEqual(["at&t's", 'q3-2024', 'results', 'co.', 'ltd', 'x']);
    expect(tokenize("AT&T's Q3-2024 results, Co._Ltd / X")).toEqual(["at&t's", 'q3-2024', 'results', 'co.', 'ltd']);
  });
});
