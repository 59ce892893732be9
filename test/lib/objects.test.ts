/**
 * withMembers (lib/objects.ts): the members and order of `{ ...a, ...b }`, and results of one shape sharing one
 * hidden class, which the spread literal does not give on node 20 (each result's own map and descriptor array
 * survived young GCs: docs/benchmarks-history.md, "Where the warm p99 tail comes from"). The hidden class is read with V8's
 * %HaveSameMap, enabled for functions compiled after the flag is set.
 */
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { withMembers } from '../../lib/objects.ts';

setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const row = (i: number) => JSON.parse(`{"dot_number":${i},"legal_name":"CARRIER ${i}","phy_state":"TX"}`) as Record<string, unknown>;

describe('withMembers', () => {
  it('gives the members, order and values of the spread literal', () => {
    const a = { x: 1, y: 'b', z: null };
    expect(JSON.stringify(withMembers(a, { w: 2, y: 'c' }))).toBe(JSON.stringify({ ...a, w: 2, y: 'c' }));
    expect(JSON.stringify(withMembers(a, { q: 1 }, { x: 9 }))).toBe(JSON.stringify({ ...a, ...{ q: 1 }, ...{ x: 9 } }));
    expect(withMembers(a, {})).toEqual({ ...a });
    const copy = withMembers(a);
    expect(copy).toEqual(a);
    expect(copy).not.toBe(a);
  });

  it('gives answers of one shape one hidden class (a literal beginning with a spread gives each its own on node 20)', () => {
    const n = Array.from({ length: 50 }, (_, i) => i);
    const merged = n.map((i) => withMembers(row(i), { risk_score: i, risk_level: 'LOW' }));
    expect(haveSameMap(merged[1]!, merged[49]!)).toBe(true);
    const three = n.map((i) => withMembers(row(i), { risk_score: i }, { risk_level: 'LOW' }));
    expect(haveSameMap(three[1]!, three[49]!)).toBe(true);
    const grown = n.map((i) => {
      const o = withMembers(row(i)) as Record<string, unknown>;
      o.risk_score = i;
      return o;
    });
    expect(haveSameMap(grown[1]!, grown[49]!)).toBe(true);
  });
});
