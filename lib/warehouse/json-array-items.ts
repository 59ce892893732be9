/**
 * Some items of a JSON array text, parsed alone (issue 22): a packed row is a JSON array of every column, and a route
 * that needs three of its ~70 values (a carrier search row's risk columns) parsed the whole row, allocating every
 * value, for each of the 20 rows of a page: most of a name search's garbage. The text is scanned once up to the last
 * wanted position (strings and their escapes skipped, nesting counted) and only the wanted items go through
 * JSON.parse, so each is exactly the value JSON.parse of the whole text has there.
 */
import type { Json } from './duckdb.ts';

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;

/**
 * The items at `positions` (ascending) of the JSON array `text`, in that order; undefined for a position past the
 * array's end (as `JSON.parse(text)[p]`). Throws SyntaxError, as JSON.parse does, when the text is not an array.
 */
export function jsonArrayItems(text: string, positions: readonly number[]): Array<Json | undefined> {
  const out: Array<Json | undefined> = new Array(positions.length).fill(undefined);
  const open = text.indexOf('[');
  if (open < 0 || text.slice(0, open).trim() !== '') throw new SyntaxError('not a JSON array');
  let want = 0;
  let index = 0;
  let start = open + 1;
  let depth = 1;
  for (let i = open + 1; i < text.length && want < positions.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: a backslash escapes the next character, so `\"` does not end it.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === 91 || c === 123) depth++;
    else if (c === 93 || c === 125) {
      depth--;
      if (depth === 0) {
        // The array's end closes its last item (none when the array is empty).
        const item = text.slice(start, i);
        if (positions[want] === index && item.trim() !== '') out[want++] = JSON.parse(item) as Json;
        break;
      }
    } else if (c === COMMA && depth === 1) {
      if (positions[want] === index) out[want++] = JSON.parse(text.slice(start, i)) as Json;
      index++;
      start = i + 1;
    }
  }
  return out;
}
