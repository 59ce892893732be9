/**
 * The person-name index (service/registry-layers/person-name-index.ts, issue 22 item 2) finds the same keys as the
 * scan it replaced, in the same order and with the same limit: over generated names with shared spellings, people
 * with several names, keys whose UTF-8 byte order differs from JavaScript's string order, and queries of every length
 * from one character to a whole name, present or not. (Against a real snapshot: test/registry/registry-packed.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { PersonNameIndex, scanPersonNames, type PersonNameEntry } from '../../service/registry-layers/person-name-index.ts';

/** mulberry32: a seeded generator, so a failure names a reproducible query. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['john', 'mary', 'anne-marie', 'jose', 'zoë', 'li', 'o', 'timothy d', 'ana', 'jean luc'];
const LAST = ['smith', 'smithson', 'cook', 'müller', 'nguyen', 'anderson', 'ann', 'de la cruz', 'o', '李'];
/** Keys whose UTF-8 byte order is not their UTF-16 order (U+FF21 sorts before U+1F600 in UTF-16, after it in UTF-8). */
const KEY_TAILS = ['', '\uff21', '\u{1f600}', 'é', 'Z', 'a'];

function entriesOf(rand: () => number, people: number): PersonNameEntry[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const out: PersonNameEntry[] = [];
  const pids = new Map<string, number>();
  for (let p = 0; p < people; p++) {
    const key = `${Math.floor(rand() * 1000)}${pick(KEY_TAILS)}:${p % 7}`;
    // A record id is a function of the key (person-names.sql: hash(person_key)); keys repeat across people here.
    if (!pids.has(key)) pids.set(key, p * 31);
    const pid = pids.get(key)!;
    const spellings = 1 + Math.floor(rand() * 3);
    for (let s = 0; s < spellings; s++) out.push({ key, pid, name: `${pick(FIRST)} ${pick(LAST)}${s === 2 ? ' jr' : ''}` });
  }
  // The same key may come twice with one name (a person listed under two companies) and stays one hit.
  return out.concat(out.slice(0, 20));
}

describe('person-name index', () => {
  it('finds the same keys, in UTF-8 key order and up to the limit, as the scan of every name', () => {
    const rand = seeded(22);
    const entries = entriesOf(rand, 3000);
    const index = PersonNameIndex.build(entries);
    expect(index.size).toBe(entries.length);
    const queries = new Set<string>(['o', 'zz', 'an', 'ann', 'smith', 'ë', '李', 'n j', ' ', 'qqq', 'jean luc de la cruz jr']);
    for (let i = 0; i < 400; i++) {
      const name = entries[Math.floor(rand() * entries.length)]!.name;
      const from = Math.floor(rand() * name.length);
      queries.add(name.slice(from, from + 1 + Math.floor(rand() * 8)));
      queries.add(name);
    }
    let nonEmpty = 0;
    for (const q of queries) {
      for (const limit of [1, 7, 200]) {
        const expected = [...scanPersonNames(entries, q, limit)];
        expect([...index.match(q, limit)], `${JSON.stringify(q)} limit ${limit}`).toEqual(expected);
        if (expected.length > 0) nonEmpty++;
      }
    }
    expect(nonEmpty).toBeGreaterThan(queries.size); // most queries match: the comparison is not vacuous
  });

  it('orders keys by their UTF-8 bytes, as DuckDB orders VARCHAR', () => {
    const keys = ['b', '\u{1f600}', '\uff21', 'a', 'é'];
    const index = PersonNameIndex.build(keys.map((key, i) => ({ key, pid: i, name: 'same name' })));
    expect([...index.match('name', 10).keys()]).toEqual(['a', 'b', 'é', '\uff21', '\u{1f600}']);
  });
});
