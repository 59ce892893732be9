/**
 * The streaming splitter of large Polygon responses (ingest/quotes/polygon-split.ts): one line per result, the rest
 * of the document kept for JSON.parse, whatever the chunking, the layout (pretty-printed, members after `results`)
 * or the strings (brackets, commas and escaped quotes inside them); a document cut short is a ParseError.
 */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../lib/errors.ts';
import { PolygonResultsSplitter } from '../../ingest/quotes/polygon-split.ts';

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
});
