/**
 * lib/canonical-json.ts writes the text of the `canonicalize` package (the project's canonical JSON until issue 22),
 * or throws where it throws: compared over arbitrary values, so every hash and stored byte stays what it was.
 */
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalText } from '../../lib/canonical-json.ts';

/** The package's outcome: its text, or the message it throws. */
function packageOutcome(v: unknown): { text?: string; error?: string } {
  try {
    return { text: canonicalize(v) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
function ourOutcome(v: unknown): { text?: string; error?: string } {
  try {
    return { text: canonicalText(v) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Strings of any UTF-16 code units (lone surrogates included), and of any full code point. */
const anyString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string(),
);
const anyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, NaN, Infinity, -Infinity),
);

describe('canonicalText', () => {
  it('equals the canonicalize package over arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalText(v)).toBe(canonicalize(v));
      }),
      { numRuns: 3000 },
    );
  });

  it('equals the package, or throws its error, over arbitrary values (lone surrogates, NaN, undefined, symbols, holes)', () => {
    const leaf = fc.oneof(
      anyString,
      anyNumber,
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.constant(Symbol('s')),
      fc.constant(() => 1),
      fc.date({ noInvalidDate: true }),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object'), tie('sparse')),
      array: fc.array(tie('value'), { maxLength: 6 }),
      sparse: fc.sparseArray(tie('value'), { maxLength: 6 }),
      object: fc.dictionary(anyString, tie('value'), { maxKeys: 8 }),
    }));
    fc.assert(
      fc.property(value, (v) => {
        expect(ourOutcome(v)).toEqual(packageOutcome(v));
      }),
      { numRuns: 4000 },
    );
  });

  it('sorts keys by UTF-16 code units whatever their insertion order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: 'binary-ascii' }), { maxLength: 80 }), fc.integer(), (keys, n) => {
        const o: Record<string, number> = {};
        for (const k of keys) o[k] = n;
        expect(canonicalText(o)).toBe(canonicalize(o));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the quirks no JSON value has: toJSON, functions, holes, boxed values, cycles, BigInt', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    const cyclicArray: unknown[] = [1];
    cyclicArray.push([cyclicArray]);
    const selfJson = {
      toJSON() {
        return selfJson;
      },
    };
    const shared = { x: 1 };
    const fnWithJson = Object.assign(() => 1, { toJSON: () => ({ b: 2, a: 1 }) });
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    const holes = [, 1, , { b: undefined, a: () => 1 }];
    for (const v of [
      { f: () => 1, u: undefined, s: Symbol('x'), n: null },
      [() => 1, undefined, Symbol('x'), 1],
      holes,
      new Date(0),
      { d: new Date(86_400_000), nested: { toJSON: () => [3, { z: 1, y: 2 }] } },
      [new Number(1), new String('ab'), new Boolean(false)],
      { a: shared, b: shared, c: [shared, shared] },
      fnWithJson,
      { fn: fnWithJson },
      cyclic,
      cyclicArray,
      selfJson,
      { n: 10n },
      10n,
      undefined,
      () => 1,
      Symbol('top'),
      { '\ud800': undefined },
      { '\ud800': 1 },
      Buffer.from('ab'),
    ])
      expect(ourOutcome(v)).toEqual(packageOutcome(v));
  });
});
