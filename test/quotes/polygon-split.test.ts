/**
 * The streaming splitter of large Polygon responses (ingest/quotes/polygon-split.ts): one line per result, the rest
 * of the document kept for JSON.parse, whatever the chunking, the layout (pretty-printed, members after `results`)
 * or the strings (brackets, commas and escaped quotes inside them); a document cut short is a ParseError. With
 * `renameTicker`, a file of renamable results (Polygon's order, `T` first) gets the same lines with `"T"` written as
 * `"_"`, and none other changed (issue 22 item 3).
 */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../lib/errors.ts';
import { PolygonResultsSplitter, RENAMED_TICKER_KEY } from '../../ingest/quotes/polygon-split.ts';

function split(text: string, chunkSize: number, flatFastPath = true): { lines: string[]; rest: unknown } {
  const parts: Buffer[] = [];
  const s = new PolygonResultsSplitter('f.json', (b) => parts.push(Buffer.from(b)), flatFastPath);
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += chunkSize) s.push(bytes.subarray(i, i + chunkSize));
  const rest = JSON.parse(s.end());
  const lines = Buffer.concat(parts).toString('utf8').split('\n');
  expect(lines.pop()).toBe('');
  expect(lines.length).toBe(s.elements);
  return { lines, rest };
}

const DOC = {
  request_id: 'a"b}],{',
  ticker: 'AAPL',
  meta: { results: [1, 2], note: '[not results]' },
  results: [
    { T: 'BRK.B', o: 1.5, t: 1, note: 'has "quotes", {braces} and [brackets], commas' },
    { T: 'X\\Y', v: -2e-7, nested: { a: [1, { b: 2 }] } },
    42,
    'text, with comma',
    null,
  ],
  adjusted: false,
  status: 'OK',
};

describe('splitting a Polygon aggregates response', () => {
  for (const [name, text] of [
    ['compact', JSON.stringify(DOC)],
    ['pretty-printed', JSON.stringify(DOC, null, 2)],
  ] as const)
    for (const chunk of [1, 7, 1 << 20])
      it(`${name}, in chunks of ${chunk} bytes: each result on its own line, the rest intact`, () => {
        const { lines, rest } = split(text, chunk);
        expect(lines.map((l) => JSON.parse(l))).toEqual(DOC.results);
        expect(lines.every((l) => !/\s/.test(l.replace(/"(?:[^"\\]|\\.)*"/g, '""')))).toBe(true);
        expect(rest).toEqual({ ...DOC, results: [] });
      });

  it('tells whether every result is plain: a string `T` without escapes, every other member a finite number', () => {
    const plainOf = (results: string) => {
      const s = new PolygonResultsSplitter('p.json', () => undefined);
      s.push(Buffer.from(`{"ticker":"A","results":[${results}],"adjusted":false}`));
      s.end();
      return s.plain;
    };
    expect(plainOf('')).toBe(true);
    expect(plainOf('{"T":"BRK.B","v":1.5e3,"vw":-0,"o":0.0000002,"c":2E-7,"h":1,"l":12345678901234567890,"t":1451883600000,"n":5}')).toBe(
      true,
    );
    expect(plainOf('{"v":1,"t":2},{}')).toBe(true); // no T: the document's ticker
    for (const notPlain of [
      '{"T":"A","o":"1.5"}', // a price as a string
      '{"T":"A","vw":null}',
      '{"T":1,"o":1}', // a number as ticker
      '{"T":"A\\"B","o":1}', // an escape
      '{"T":"A","otc":true}',
      '{"T":"A","o":1e400}', // not finite everywhere
      '{"T":"A","o":123456789012345678901}', // 21 integer digits
      '{"T":"A","o":[1]}',
      '{"T":"A", "o":1}', // whitespace: the byte scan
      '{"T":"A","o":1},42',
    ])
      expect([notPlain, plainOf(notPlain)]).toEqual([notPlain, false]);
    const s = new PolygonResultsSplitter('p.json', () => undefined, false);
    s.push(Buffer.from('{"results":[{"T":"A","o":1}]}'));
    expect(s.plain).toBe(false); // without the flat fast path, never
  });

  it('finds a file plain whatever the chunking (a result cut by a chunk is matched whole with the next)', () => {
    const results = Array.from({ length: 300 }, (_, k) => ({
      T: `T${k}`,
      v: 1000.5 + k,
      vw: 4.75,
      o: 4.7,
      c: 4.8,
      h: 4.9,
      l: 4.6,
      t: 1451883600000 + k,
      n: k,
    }));
    const text = JSON.stringify({ adjusted: false, results, status: 'OK' });
    for (const chunk of [1, 7, 64, 1000, 1 << 20]) {
      const parts: Buffer[] = [];
      const s = new PolygonResultsSplitter('p.json', (b) => parts.push(Buffer.from(b)));
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length; i += chunk) s.push(bytes.subarray(i, i + chunk));
      expect(JSON.parse(s.end())).toEqual({ adjusted: false, results: [], status: 'OK' });
      expect([chunk, s.plain]).toEqual([chunk, true]);
      expect(
        Buffer.concat(parts)
          .toString()
          .split('\n')
          .slice(0, -1)
          .map((l) => JSON.parse(l)),
      ).toEqual(results);
    }
    // The same with one result that is not plain, in the middle: not plain, the same lines.
    const mixed = text.replace('"T":"T150"', '"T":"T150","x":null');
    const s = new PolygonResultsSplitter('p.json', () => undefined);
    for (let i = 0; i < mixed.length; i += 64) s.push(Buffer.from(mixed.slice(i, i + 64)));
    s.end();
    expect(s.plain).toBe(false);
  });

  it('gives no line for an empty or absent results array', () => {
    expect(split('{"ticker":"A","results":[ ]}', 3)).toEqual({ lines: [], rest: { ticker: 'A', results: [] } });
    expect(split('{"status":"OK"}', 5)).toEqual({ lines: [], rest: { status: 'OK' } });
  });

  it('rejects a document cut short, naming the file', () => {
    const s = new PolygonResultsSplitter('cut.json', () => undefined);
    s.push(Buffer.from('{"results":[{"T":"A","o":1},{"T":"B"'));
    expect(() => s.end()).toThrow(ParseError);
    expect(() => s.end()).toThrow(/ends early/);
  });

  it('copies flat results whole exactly as the byte scan copies them, whatever the chunking or the results', () => {
    // Flat compact results (the fast path), and results it must leave to the byte scan: whitespace, escapes, nesting,
    // non-ASCII text, non-object results, a separator after whitespace.
    const results = [
      { T: 'T00001', v: 100000.0, vw: 4.75, o: 4.75, c: 4.75, h: 4.75, l: 4.75, t: 1451883600000, n: 50 },
      { T: 'BRK.B', o: 1.5, t: 1, note: 'commas, colons: {braces} [brackets]' },
      { T: 'É', o: 2, note: 'ü → ∞' },
      { T: 'Q"X', o: 3 },
      { T: 'A', nested: { a: [1, 2] } },
      7,
      {},
      { T: 'Z', o: -2e-7, t: null },
    ];
    const compact = JSON.stringify({ adjusted: true, results, status: 'OK' });
    const spaced = compact.replace('{"T":"A"', ' { "T" : "A"').replace(',7,', ' , 7 ,\n');
    for (const text of [compact, spaced, JSON.stringify({ results }, null, 1)])
      for (const chunk of [1, 5, 13, 64, 1 << 20]) {
        const fast = split(text, chunk, true);
        expect(fast).toEqual(split(text, chunk, false));
        expect(fast.lines.map((l) => JSON.parse(l))).toEqual(results);
      }
  });

  describe('renaming the ticker member (renameTicker)', () => {
    /** The lines and flags of `text` split in chunks of `chunk` bytes, renaming or not. */
    const splitRenaming = (text: string, chunk: number, rename: boolean, reuseOutput = false) => {
      const parts: Buffer[] = [];
      const s = new PolygonResultsSplitter('r.json', (b) => parts.push(Buffer.from(b)), true, rename, reuseOutput);
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length; i += chunk) s.push(bytes.subarray(i, i + chunk));
      const rest = JSON.parse(s.end());
      return { lines: Buffer.concat(parts).toString().split('\n').slice(0, -1), rest, s };
    };
    const results = Array.from({ length: 300 }, (_, k) =>
      k % 7 === 3
        ? { v: 5, t: 1451883600000 + k, vTT: 1 } // no ticker (the document's), and a member named like it but longer
        : {
            T: `T${k}.X`,
            v: 1000.5 + k,
            vw: 4.75,
            o: -0.5,
            c: 2e-7,
            h: Number('12345678901234567890'),
            l: 4.6,
            t: 1451883600000 + k,
            n: k,
          },
    );
    const text = JSON.stringify({ ticker: 'DOC', adjusted: false, results, status: 'OK' });

    it('writes each renamable result with its `T` named `_`, the same line otherwise, whatever the chunking', () => {
      expect(RENAMED_TICKER_KEY).toBe('_');
      const plain = splitRenaming(text, 1 << 20, false).lines;
      expect(plain.map((l) => JSON.parse(l))).toEqual(results);
      for (const chunk of [1, 7, 64, 1000, 1 << 20]) {
        const { lines, rest, s } = splitRenaming(text, chunk, true);
        expect([chunk, s.plain, s.renamed, s.renamedResults]).toEqual([chunk, true, true, results.filter((r) => 'T' in r).length]);
        expect(rest).toEqual({ ticker: 'DOC', adjusted: false, results: [], status: 'OK' });
        expect(lines).toEqual(plain.map((l) => (l.startsWith('{"T":') ? `{"_":${l.slice(5)}` : l)));
      }
    });

    it('gives the same lines with one output buffer reused for every chunk (reuseOutput), whatever the chunking', () => {
      const pretty = JSON.stringify({ ticker: 'DOC', results }, null, 1);
      for (const doc of [text, pretty])
        for (const rename of [false, true])
          for (const chunk of [7, 1000, 4096, 1 << 20]) {
            const fresh = splitRenaming(doc, chunk, rename);
            const reused = splitRenaming(doc, chunk, rename, true);
            expect([chunk, reused.lines, reused.rest]).toEqual([chunk, fresh.lines, fresh.rest]);
          }
    });

    it('renames nothing without renameTicker, and nothing of a file that is not plain (the byte scan)', () => {
      const { lines, s } = splitRenaming(text, 64, false);
      expect([s.renamed, s.renamedResults]).toEqual([false, 0]);
      expect(lines.every((l) => !l.startsWith('{"_"'))).toBe(true);
      const spaced = splitRenaming(JSON.stringify({ results }, null, 1), 64, true);
      expect([spaced.s.plain, spaced.s.renamed, spaced.s.renamedResults]).toEqual([false, false, 0]);
    });

    it('is renamable only while every result is plain with its `T` first and no other member named `T` or `_`', () => {
      const flags = (result: string) => {
        const { s } = splitRenaming(`{"results":[{"T":"A","o":1},${result},{"T":"B","o":2}]}`, 1 << 20, true);
        return { plain: s.plain, renamed: s.renamed, renamedResults: s.renamedResults };
      };
      expect(flags('{"o":1,"t":2}')).toEqual({ plain: true, renamed: true, renamedResults: 2 });
      expect(flags('{}')).toEqual({ plain: true, renamed: true, renamedResults: 2 });
      // The first result was renamed before this one, which and the last are not.
      for (const plainOnly of ['{"o":1,"T":"X"}', '{"T":"X","T":"Y"}', '{"T":"X","o":1,"T":"Y"}', '{"_":1}', '{"T":"X","_":1}'])
        expect([plainOnly, flags(plainOnly)]).toEqual([plainOnly, { plain: true, renamed: false, renamedResults: 1 }]);
      expect(flags('{"T":"X","o":"1"}')).toEqual({ plain: false, renamed: false, renamedResults: 1 });
    });
  });
});
