/**
 * The JSON guard (issue 25): finds what in a JSON text the canonical hashing
 * (RFC 8785 via `canonicalize`, lib/hash.ts) cannot represent faithfully, or
 * what would make a stored object ambiguous, so a route can answer 400 naming
 * the field before anything is hashed or written:
 *
 * - a lone surrogate escape (`"\ud800"`): RFC 8785 §3.2.2.2 requires
 *   well-formed UTF-16 and the hashing throws on it;
 * - nesting deeper than `maxDepth` (default MAX_JSON_DEPTH): the hashing recurses;
 * - an integer literal beyond ±(2^53 − 1), or any number that is not finite
 *   as an IEEE double (`1e400`): JSON.parse would silently round it before it is
 *   hashed and stored (RFC 8785 §3.2.2.3 serialises doubles);
 * - a `__proto__` member name (prototype pollution when merged into objects);
 * - a member name given twice in one object (RFC 8259 §4: names SHOULD be
 *   unique; JSON.parse keeps the last, so what was hashed is not what was sent).
 *
 * Pure and iterative (a deep body cannot overflow the stack). It expects text
 * that JSON.parse accepted; on anything else it returns null and leaves the
 * syntax error to JSON.parse.
 */

export const MAX_JSON_DEPTH = 64;

export interface JsonProblem {
  /** Where: `field.sub[3].name`, or `body` for the top level. */
  path: string;
  problem: string;
}

type Frame = { kind: 'object'; key: string | null; keys: Set<string> } | { kind: 'array'; index: number };

function pathOf(stack: Frame[], leafKey?: string): string {
  let out = '';
  stack.forEach((f, k) => {
    if (f.kind === 'object') {
      // A member name being read replaces the object's previous member in the path.
      const key = k === stack.length - 1 && leafKey !== undefined ? leafKey : f.key;
      if (key !== null) out += out ? `.${key}` : key;
    } else out += `[${f.index}]`;
  });
  return out || 'body';
}

const HEX = /^[0-9a-fA-F]{4}$/;

const ESCAPED: Record<string, number> = { '"': 0x22, '\\': 0x5c, '/': 0x2f, b: 8, f: 12, n: 10, r: 13, t: 9 };

/** Reads the string starting at `text[i] === '"'`; returns its decoded value (lone surrogates kept) and the index after it. */
function readString(text: string, i: number): { value: string; end: number; loneSurrogate: boolean } {
  // Most strings hold no escape and no surrogate: their value is the text between the quotes, read without
  // collecting code units (this runs over every POST body, MCP calls included; issue 22).
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return { value: text.slice(i + 1, j), end: j + 1, loneSurrogate: false };
    if (c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) break;
  }
  let value = '';
  let j = i + 1;
  let loneSurrogate = false;
  const units: number[] = [];
  for (;;) {
    const c = text.charCodeAt(j);
    if (Number.isNaN(c)) break;
    if (c === 0x22) {
      j++;
      break;
    }
    if (c === 0x5c) {
      const e = text[j + 1];
      if (e === 'u' && HEX.test(text.slice(j + 2, j + 6))) {
        units.push(Number.parseInt(text.slice(j + 2, j + 6), 16));
        j += 6;
        continue;
      }
      units.push(ESCAPED[e ?? ''] ?? 0);
      j += 2;
      continue;
    }
    units.push(c);
    j++;
  }
  for (let k = 0; k < units.length; k++) {
    const u = units[k]!;
    if (u >= 0xd800 && u <= 0xdbff) {
      const next = units[k + 1];
      if (next !== undefined && next >= 0xdc00 && next <= 0xdfff) {
        k++;
        continue;
      }
      loneSurrogate = true;
    } else if (u >= 0xdc00 && u <= 0xdfff) loneSurrogate = true;
  }
  // The value is only needed for member names (paths, __proto__, duplicates): decode in chunks.
  for (let k = 0; k < units.length; k += 4096) value += String.fromCharCode(...units.slice(k, k + 4096));
  return { value, end: j, loneSurrogate };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The first problem of a JSON text (see the module comment), or null when the hashing can take it as sent. */
export function findJsonProblem(text: string, maxDepth = MAX_JSON_DEPTH): JsonProblem | null {
  const stack: Frame[] = [];
  let i = 0;
  /** Whether the next string in the current object is a member name. */
  let expectKey = false;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === ':') {
      i++;
      continue;
    }
    const top = stack[stack.length - 1];
    if (c === ',') {
      if (top?.kind === 'array') top.index++;
      else if (top) expectKey = true;
      i++;
      continue;
    }
    if (c === '{' || c === '[') {
      if (stack.length >= maxDepth) return { path: pathOf(stack), problem: `nesting deeper than ${maxDepth} levels` };
      stack.push(c === '{' ? { kind: 'object', key: null, keys: new Set() } : { kind: 'array', index: 0 });
      expectKey = c === '{';
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
      i++;
      continue;
    }
    if (c === '"') {
      const s = readString(text, i);
      if (expectKey && top?.kind === 'object') {
        const key = s.value;
        if (s.loneSurrogate) return { path: pathOf(stack), problem: 'a member name contains a lone surrogate escape (not valid Unicode)' };
        if (key === '__proto__') return { path: pathOf(stack, key), problem: "the member name '__proto__' is not accepted" };
        if (top.keys.has(key)) return { path: pathOf(stack, key), problem: 'this member name appears twice in one object' };
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      } else if (s.loneSurrogate) {
        return { path: pathOf(stack), problem: 'the string contains a lone surrogate escape (not valid Unicode), which cannot be hashed' };
      }
      i = s.end;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) return null;
      const tok = m[0];
      const v = Number(tok);
      if (!Number.isFinite(v)) return { path: pathOf(stack), problem: `the number ${tok.slice(0, 40)} is out of the range of a double` };
      if (!/[.eE]/.test(tok) && !Number.isSafeInteger(v))
        return {
          path: pathOf(stack),
          problem: `the integer ${tok.slice(0, 40)} is beyond ±(2^53 − 1) and would be rounded; send it as a string`,
        };
      i += tok.length;
      continue;
    }
    // true, false, null
    if (c === 't' || c === 'n') i += 4;
    else if (c === 'f') i += 5;
    else return null;
  }
  return null;
}
