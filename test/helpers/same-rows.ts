/**
 * Table-by-table comparison of two snapshots' rows, shared by the incremental tests (registry, quotes): an
 * incremental run must publish the same rows as a full run over the same inputs.
 */
import { expect } from 'vitest';

/**
 * Table by table, so a failure names the table and shows the differing rows. `actual` and `expected` map a
 * table name to its rows, each row one JSON text, sorted.
 */
export function expectSameRows(actual: Record<string, string[]>, expected: Record<string, string[]>): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const t of Object.keys(expected)) expect(actual[t], `table ${t}`).toEqual(expected[t]);
}
