/**
 * Contract shape checker shared by the contract suites (test/contract/*.test.ts).
 *
 * A contract table is transcribed from a specification in ../shared/spec/: one row per field the specification's
 * tables name, with the type they give. `checkShape` walks a live answer and returns one readable violation per
 * field whose name or type breaks the table, naming the specification, so a type change anywhere fails a test that
 * says which field of which specification it broke.
 *
 * Paths: dot-separated keys; `[]` after a key means "every element of this array" (`red_flags[]`,
 * `transcripts[].speakers[]`). A required field must be present (null counts as present only when `nullable`).
 */
export type ContractType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'url' | 'digits' | 'datetime' | 'date';

export interface ContractField {
  /** Field path inside the answer, e.g. `identity.cik`, `red_flags[]`, `basics.unsafe_driving`. */
  path: string;
  type: ContractType;
  required: boolean;
  /** The specification's table allows null for this field (default false). */
  nullable?: boolean;
}

export interface ContractTable {
  /** Specification file and table, e.g. `000_21a7ec1867cd30d8.txt: identity card`. */
  spec: string;
  fields: ContractField[];
}

function typeOk(value: unknown, type: ContractType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'digits':
      return typeof value === 'string' && /^\d+$/.test(value);
    case 'url':
      return typeof value === 'string' && /^(https?:\/\/|\/)/.test(value);
    case 'datetime':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) && /T\d{2}:\d{2}/.test(value);
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

/** Every value reached by `path` in `root`, with the concrete path it was reached by (for messages). */
function valuesAt(root: unknown, path: string): Array<{ at: string; present: boolean; value: unknown }> {
  let frontier: Array<{ at: string; present: boolean; value: unknown }> = [{ at: '', present: true, value: root }];
  for (const raw of path.split('.')) {
    const each = raw.endsWith('[]');
    const key = each ? raw.slice(0, -2) : raw;
    const next: typeof frontier = [];
    for (const f of frontier) {
      if (!f.present || f.value === null || typeof f.value !== 'object') {
        next.push({ at: f.at ? `${f.at}.${key}` : key, present: false, value: undefined });
        continue;
      }
      const obj = f.value as Record<string, unknown>;
      const at = f.at ? `${f.at}.${key}` : key;
      const present = key === '' ? true : Object.hasOwn(obj, key);
      const value = key === '' ? f.value : obj[key];
      if (each && present && Array.isArray(value)) {
        for (const [i, v] of value.entries()) next.push({ at: `${at}[${i}]`, present: true, value: v });
      } else next.push({ at: each ? `${at}[]` : at, present, value });
    }
    frontier = next;
  }
  return frontier;
}

/** Violations of `table` by `answer`; empty when the answer speaks the contract. */
export function checkShape(answer: unknown, table: ContractTable): string[] {
  const problems: string[] = [];
  for (const field of table.fields) {
    for (const { at, present, value } of valuesAt(answer, field.path)) {
      if (!present) {
        if (field.required) problems.push(`${table.spec}: ${field.path} is required but missing (at ${at})`);
        continue;
      }
      if (value === null) {
        if (!field.nullable) problems.push(`${table.spec}: ${field.path} is null, the specification says ${field.type} (at ${at})`);
        continue;
      }
      if (value === undefined && !field.required) continue;
      if (!typeOk(value, field.type)) {
        problems.push(`${table.spec}: ${field.path} should be ${field.type}, got ${JSON.stringify(value)?.slice(0, 80)} (at ${at})`);
      }
    }
  }
  return problems;
}
