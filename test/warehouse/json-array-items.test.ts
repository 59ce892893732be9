/** jsonArrayItems gives, for any JSON array and any positions, the values JSON.parse of the whole text has there. */
import { describe, expect, it } from 'vitest';
import { jsonArrayItems } from '../../lib/warehouse/json-array-items.ts';

describe('jsonArrayItems', () => {
  it('equals JSON.parse of the whole array at every set of positions, whatever the items hold', () => {
    const items: unknown[] = [
      1000000,
      'J BLUE LINE HAULING CO 0',
      null,
      false,
      true,
      -0.05,
      1e21,
      '',
      'a,b]c[d{e}f',
      'quote " inside',
      'back\\slash\\',
      'esc \\" tricky \\\\',
      'unicode é 😀 \u2028',
      ['DRIVER_OOS_ABOVE_NATIONAL', 'a,"]'],
      [],
      {},
      { a: [1, { b: '],}' }], c: null },
      [[[]]],
    ];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 400; round++) {
      const arr = Array.from({ length: rand(12) }, () => items[rand(items.length)]);
      const text = round % 3 === 0 ? JSON.stringify(arr, null, round % 2 ? 1 : 0) : JSON.stringify(arr);
      const whole = JSON.parse(text) as unknown[];
      const positions = [...new Set(Array.from({ length: rand(5) }, () => rand(arr.length + 2)))].sort((a, b) => a - b);
      expect(jsonArrayItems(text, positions), `${text} @ ${positions}`).toEqual(positions.map((p) => whole[p]));
    }
    expect(jsonArrayItems('[]', [0])).toEqual([undefined]);
    expect(jsonArrayItems(' [ 1 , "x" ] ', [0, 1, 2])).toEqual([1, 'x', undefined]);
    expect(() => jsonArrayItems('{"a":1}', [0])).toThrow(SyntaxError);
  });
});
