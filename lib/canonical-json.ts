/**
 * RFC 8785 (JCS) canonical JSON text, written as the `canonicalize` package (4.0.0) writes it, without its garbage
 * (issue 22 item 2): the package allocates a `Set` for every object key it writes (the key goes through
 * `canonicalize(key)` with a fresh default `seen`), copies each object's keys into a sort work array, and joins an
 * array of member texts per object and per array. A `freight_compare_carriers` call canonicalizes two vetting
 * snapshots this way: ~280 of its ~410 KB allocated a call were the package's (heap sampling, small sample).
 *
 * Same text for every input, quirks included (test/lib/canonical-json.test.ts compares both over arbitrary values):
 * object keys in UTF-16 code-unit order; members whose value is undefined or a symbol left out; array elements that
 * are undefined or symbols written as null; `toJSON` honoured; numbers and strings as `JSON.stringify` writes them;
 * NaN, ±Infinity, lone surrogates and cycles refused with the package's errors; BigInt refused by `JSON.stringify`.
 * The quirks no JSON value has are kept too: a function member writes `undefined`, a function element and an array
 * hole write nothing between their commas.
 *
 * Returns undefined where the package does (a top-level undefined, function or symbol).
 */
export function canonicalText(value: unknown): string | undefined {
  return write(value, []);
}

/** No lone surrogate in `s` (ES2024 `String.prototype.isWellFormed`, node >= 20; the project's TS lib predates it). */
const wellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

/** `value`'s text; `open` holds the objects being written around it (a cycle is one of them met again). */
function write(value: unknown, open: object[]): string | undefined {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw new Error('Lone surrogate is not allowed');
      return JSON.stringify(value);
    case 'number':
      if (Number.isNaN(value)) throw new Error('NaN is not allowed');
      if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      // undefined, function and symbol give undefined; bigint throws JSON.stringify's TypeError.
      return JSON.stringify(value);
  }
  if (value === null) return 'null';
  if (open.includes(value)) throw new Error('Circular reference detected');
  open.push(value);
  let text: string | undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') text = write((value as { toJSON(): unknown }).toJSON(), open);
  else if (Array.isArray(value)) text = writeArray(value, open);
  else text = writeObject(value as Record<string, unknown>, open);
  open.pop();
  return text;
}

function writeArray(a: unknown[], open: object[]): string {
  let text = '[';
  for (let i = 0; i < a.length; i++) {
    if (i > 0) text += ',';
    const e = a[i];
    // A hole stays empty, as `map` then `join` leave it.
    if (e === undefined && !(i in a)) continue;
    const t = write(e === undefined || typeof e === 'symbol' ? null : e, open);
    if (t !== undefined) text += t;
  }
  return `${text}]`;
}

function writeObject(o: Record<string, unknown>, open: object[]): string {
  const keys = Object.keys(o);
  sortKeys(keys);
  let text = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = o[key];
    if (v === undefined || typeof v === 'symbol') continue;
    // The package writes `${canonicalize(key)}:${canonicalize(value)}`: an undefined value (a function) as `undefined`.
    if (first) first = false;
    else text += ',';
    text += memberName(key);
    text += `${write(v, open)}`;
  }
  return `${text}}`;
}

/** Member names met before, quoted with their colon: a snapshot's ~400 members have the same few hundred names call after call. */
const memberNames = new Map<string, string>();
/** Bounds `memberNames`: names drawn from data (tickers, dates) stop being remembered once it is full. */
const MEMBER_NAMES_MAX = 4096;

/** `JSON.stringify(key) + ':'`, or the package's error for a key with a lone surrogate. */
function memberName(key: string): string {
  let q = memberNames.get(key);
  if (q === undefined) {
    if (!wellFormed(key)) throw new Error('Lone surrogate is not allowed');
    q = `${JSON.stringify(key)}:`;
    if (memberNames.size < MEMBER_NAMES_MAX) memberNames.set(key, q);
  }
  return q;
}

/**
 * Sorts distinct keys in place as `Array.prototype.sort` does without a comparator (UTF-16 code units, which `<` on
 * two strings compares): left alone when already in order, else a binary insertion sort, which needs no work array.
 */
function sortKeys(keys: string[]): void {
  const n = keys.length;
  let i = 1;
  while (i < n && keys[i - 1]! < keys[i]!) i++;
  for (; i < n; i++) {
    const k = keys[i]!;
    let lo = 0;
    let hi = i;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid]! < k) lo = mid + 1;
      else hi = mid;
    }
    for (let j = i; j > lo; j--) keys[j] = keys[j - 1]!;
    keys[lo] = k;
  }
}
