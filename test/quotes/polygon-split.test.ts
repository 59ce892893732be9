/**
 * The streaming splitter of large Polygon responses (ingest/quotes/polygon-split.ts): one line per result, the rest
 * of the document kept for JSON.parse, whatever the chunking, the layout (pretty-printed, members after `results`)
 * or the strings (brackets, commas and escaped quotes inside them); a document cut short is a ParseError.
 */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../lib/errors.ts';
import { PolygonResultsSplitter } from '../../ingest/quotes/polygon-split.ts';

function split(text: string, chunkSize: number): { lines: string[]; rest: unknown } {
  const parts: Buffer[] = [];
  const s = new PolygonResultsSplitter('f.json', (b) => parts.push(Buffer.from(b)));
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
});
