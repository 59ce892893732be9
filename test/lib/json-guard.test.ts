/**
 * The JSON guard names the field the canonical hashing cannot take as sent:
 * lone surrogates, depth, integers beyond 2^53, non-finite numbers,
 * `__proto__` and duplicate member names; ordinary JSON passes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/hash.ts';
import { findJsonProblem, MAX_JSON_DEPTH } from '../../lib/json-guard.ts';

describe('findJsonProblem', () => {
  it('names the field of each kind of problem', () => {
    expect(findJsonProblem('{"a":{"b":["x","\\ud800"]}}')).toMatchObject({
      path: 'a.b[1]',
      problem: expect.stringMatching(/lone surrogate/),
    });
    expect(findJsonProblem('{"a":"\\udc00z"}')?.path).toBe('a');
    expect(findJsonProblem('{"ev":{"n":9007199254740993}}')).toMatchObject({ path: 'ev.n', problem: expect.stringMatching(/2\^53/) });
    expect(findJsonProblem('{"n":-9007199254740992}')?.path).toBe('n');
    expect(findJsonProblem('{"n":1e400}')?.problem).toMatch(/range of a double/);
    expect(findJsonProblem('{"x":{"__proto__":{"admin":true}}}')).toMatchObject({ path: 'x.__proto__' });
    expect(findJsonProblem('{"a":1,"b":2,"a":3}')).toMatchObject({ path: 'a', problem: expect.stringMatching(/twice/) });
    // One name spelled plainly and escaped is one name (a plain name is read without decoding, an escaped one decoded).
    expect(findJsonProblem('{"ab":1,"\\u0061b":2}')).toMatchObject({ path: 'ab', problem: expect.stringMatching(/twice/) });
    expect(findJsonProblem('{"\\u0061b":1,"ab":2}')).toMatchObject({ path: 'ab', problem: expect.stringMatching(/twice/) });
    expect(findJsonProblem('{"x":{"__pro\\u0074o__":1}}')).toMatchObject({ path: 'x.__proto__' });
    // A raw (unescaped) lone surrogate in a name or a value is found too; a raw pair passes.
    expect(findJsonProblem('{"k\ud800":1}')?.problem).toMatch(/lone surrogate/);
    expect(findJsonProblem('{"k":"v\udc00"}')?.path).toBe('k');
    expect(findJsonProblem('{"k\ud83d\ude00":"v\ud83d\ude00","k":1}')).toBeNull();
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(findJsonProblem(deep)?.problem).toMatch(/nesting deeper than 64/);
    expect(findJsonProblem(`{"a":${'['.repeat(3000)}${']'.repeat(3000)}}`)?.path).toMatch(/^a(\[0\])+$/);
  });
  it('passes ordinary JSON: safe integers, decimals, paired surrogates, escapes, same names in different objects', () => {
    for (const t of [
      '{"dot_number":123456,"broker_id":"b","evidence":{"temp_c":-3.5,"big":"9007199254740993","emoji":"\\ud83d\\ude00 ok"}}',
      '[{"a":1},{"a":2}]',
      '"\\"quoted\\" \\\\ back"',
      '{"n":9007199254740991,"m":1.5e300,"t":true,"f":false,"z":null}',
    ])
      expect(findJsonProblem(t), t).toBeNull();
  });
  it('accepts exactly what the canonical hashing can represent, over arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = JSON.stringify(v);
        if (findJsonProblem(text) === null) expect(() => canonicalJson(JSON.parse(text))).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
