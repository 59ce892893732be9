/**
 * Streams a Polygon aggregates response (`{ticker?, adjusted?, results: [...], ...}`) apart without parsing it whole:
 * each element of the top-level `results` array comes out as one line of text (its JSON, whitespace outside strings
 * removed), and the rest of the document (every other member, `results` emptied) is kept as a small JSON text that
 * JSON.parse reads for the document's `ticker` and `adjusted`. Memory stays at one chunk, one element and the rest.
 *
 * Used for large responses (jobs/quotes/quotes.pipeline.ts): the lines go to DuckDB's newline-delimited JSON reader,
 * so a 500,000-result file is never one in-memory object (issue 22, item 3). It checks structure only (strings,
 * brackets, depth); the elements' JSON is checked by the reader, the rest's by JSON.parse.
 */
import { ParseError } from '../../lib/errors.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const NEWLINE = 0x0a;
const T_BYTE = 0x54;
const RENAMED_BYTE = 0x5f; // `_`, RENAMED_TICKER_KEY
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * A flat result in compact JSON followed by its separator, matched on the chunk's latin1 text (one character per
 * byte): `{`, then strings without escapes and bytes that are neither whitespace, quotes, backslashes nor brackets,
 * then `}` and `,` or `]`. For such a result the byte scan below would copy exactly its bytes and end it at that
 * separator, so it is copied in one step (Polygon results are flat: `{"T":"A","v":1.0,...,"n":5}`). Anything else
 * (whitespace, an escape, a nested value, a result cut by the chunk's end) fails to match and takes the byte scan.
 * The alternatives begin with different characters, so a match or a failure costs one pass over the result.
 */
const FLAT_RESULT = /\{(?:"[^"\\]*"|[^"\\{}[\]\s])*\}[,\]]/y;

/** A JSON number whose value is finite in every reader: at most 20 integer digits and a two-digit exponent. */
const PLAIN_NUMBER = String.raw`-?(?:0|[1-9]\d{0,19})(?:\.\d+)?(?:[eE][+-]?\d{1,2})?`;
/** A member of a plain result: `"T"` with a string without escapes, any other name (without escapes) with a number. */
const PLAIN_MEMBER = String.raw`(?:"T":"[^"\\]*"|"(?:[^"\\T]|[^"\\]{2,})?":${PLAIN_NUMBER})`;
/**
 * A plain result in compact JSON followed by its separator: a flat result (FLAT_RESULT matches it too) whose `T`, when
 * present, is a string without escapes and whose every other member is a finite JSON number (no null, string, boolean
 * or nested value). In a file of plain results only, each field's JSON type is known, so DuckDB may read the values
 * typed (jobs/quotes/quotes.pipeline.ts loadPolygonRows) with the same outcome as reading each value's JSON text and
 * typing it by its first character (the general path). The bench's results and Polygon's usual compact aggregates
 * results (`{"T":…,"v":…,"vw":…,"o":…,"c":…,"h":…,"l":…,"t":…,"n":…}`) are plain; any other result (a null, a
 * boolean such as `otc`, whitespace) is still split as before, and only makes the file not plain.
 */
const PLAIN_RESULT = new RegExp(String.raw`\{(?:${PLAIN_MEMBER}(?:,${PLAIN_MEMBER})*)?\}[,\]]`, 'y');

/** The name a renamed result's ticker member gets (RENAMABLE_RESULT): one byte, as `T`, so the line keeps its length. */
export const RENAMED_TICKER_KEY = '_';
/** A member of a renamable result other than its ticker: a name other than `T` and `_` (without escapes), a number. */
const RENAMABLE_MEMBER = String.raw`"(?:[^"\\T_]|[^"\\]{2,})?":${PLAIN_NUMBER}`;
/**
 * A plain result whose `T`, when present, is its first member, and that has no other member named `T` or `_` (Polygon's
 * own order: `{"T":…,"v":…,…}`). With `renameTicker`, the splitter writes such a result's `"T"` as `"_"`: DuckDB's
 * typed JSON reader may then read the ticker and `t` as columns of one read (its column names ignore case, so `T` and
 * `t` cannot both be columns), and `_` names nothing else in the result (jobs/quotes/quotes.pipeline.ts, issue 22
 * item 3).
 */
const RENAMABLE_RESULT = new RegExp(
  String.raw`\{(?:"T":"[^"\\]*"(?:,${RENAMABLE_MEMBER})*|(?:${RENAMABLE_MEMBER}(?:,${RENAMABLE_MEMBER})*)?)\}[,\]]`,
  'y',
);

/**
 * A result start this close to the end of a chunk that matches neither regex is taken as cut by the chunk: its bytes
 * wait for the next chunk (a longer or unfinished one takes the byte scan, which gives the same lines).
 */
const MAX_CARRY_BYTES = 4096;

/** The rest of a document (outside `results`) may not exceed this many bytes. */
export const MAX_REST_BYTES = 1 << 20;

export class PolygonResultsSplitter {
  private depth = 0;
  private inString = false;
  private escape = false;
  /** At depth 1: whether the next string is a member name. */
  private keyPos = false;
  private keyBytes: number[] | null = null;
  private lastKey: string | null = null;
  /** Inside the top-level `results` array (its elements are at depth 2). */
  private inResults = false;
  private inElement = false;
  private rest: Buffer[] = [];
  private restBytes = 0;
  private offset = 0;
  /** Results written so far. */
  elements = 0;
  /** True while every result so far was plain (PLAIN_RESULT); with flatFastPath off, never. */
  plain: boolean;
  /**
   * With renameTicker: true while every result so far was renamable (RENAMABLE_RESULT), each written with its `T` member
   * named `_` (RENAMED_TICKER_KEY); false from the first result that is not, which and every later result is written
   * as it is. So when it ends false with `renamedResults` > 0, the lines mix both: split the file again without renaming.
   */
  renamed: boolean;
  /** Results written with their `T` named `_` (the first `renamedResults` lines that have a `T`). */
  renamedResults = 0;
  /** The tail of the last chunk from a result start that matched neither regex, scanned again with the next chunk. */
  private carry: Buffer | null = null;
  /** The output buffer reused from chunk to chunk (reuseOutput). */
  private out: Buffer | null = null;
  /** The separators' offsets of the run of results being copied (scan), reused from chunk to chunk. */
  private sepAt: number[] = [];

  constructor(
    private readonly file: string,
    /** Receives the element lines, in order (a chunk may hold several lines or part of one). */
    private readonly emit: (bytes: Buffer) => void,
    /** Whether flat results are copied whole (FLAT_RESULT); off only to compare with the byte scan in tests. */
    private readonly flatFastPath = true,
    /** Whether renamable results get their `T` named `_` (see `renamed`). */
    renameTicker = false,
    /**
     * Whether one output buffer serves every chunk: the bytes `emit` receives are then valid only during that call (a
     * caller that writes them synchronously). Without it each chunk's lines get a buffer of their own, about a
     * megabyte outside V8's heap each, whose churn brings mark-compacts for external memory (issue 22 item 3).
     */
    private readonly reuseOutput = false,
  ) {
    this.plain = flatFastPath;
    this.renamed = flatFastPath && renameTicker;
  }

  /** Feeds the next chunk of the file. */
  push(chunk: Buffer): void {
    if (this.carry) {
      chunk = Buffer.concat([this.carry, chunk]);
      this.carry = null;
    }
    this.scan(chunk, false);
  }

  private scan(chunk: Buffer, last: boolean): void {
    // The element lines of this chunk are gathered in one buffer and emitted once (a write per result cost more than
    // the scan). Each element's bytes are at most its own plus the newline that replaces its separator, so the
    // chunk's length plus one is enough. The state lives in locals during the loop and is stored back at the end.
    const out = this.outputBuffer(chunk.length + 1);
    let o = 0;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escape;
    let inResults = this.inResults;
    let inElement = this.inElement;
    let keyPos = this.keyPos;
    // A chunk may begin inside an element or inside the rest (even inside one of their strings): its run starts at 0.
    let segStart = inElement ? 0 : -1; // start of the current run of element bytes to copy
    let restStart = !inElement && !inResults ? 0 : -1; // start of the current run of rest bytes
    const n = chunk.length;
    // The chunk as latin1 text for FLAT_RESULT, made on the first result start it meets.
    let text: string | null = null;
    // Where the bytes kept for the next chunk begin (a result start that matched neither regex near the end).
    let carryFrom = -1;
    for (let i = 0; i < n; i++) {
      const b = chunk[i]!;
      if (inString) {
        if (this.keyBytes) this.keyBytes.push(b);
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) {
          inString = false;
          if (this.keyBytes) {
            this.keyBytes.pop(); // the closing quote
            this.lastKey = Buffer.from(this.keyBytes).toString('utf8');
            this.keyBytes = null;
          }
        }
        continue;
      }
      if (inElement) {
        // Element bytes: copied except whitespace outside strings; the element ends at a comma or bracket at depth 2.
        if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
          if (segStart >= 0) o += chunk.copy(out, o, segStart, i);
          segStart = -1;
          continue;
        }
        if (depth === 2 && (b === COMMA || b === CLOSE_ARR)) {
          if (segStart >= 0) o += chunk.copy(out, o, segStart, i);
          segStart = -1;
          out[o++] = NEWLINE;
          this.elements++;
          inElement = false;
          if (b === CLOSE_ARR) {
            inResults = false;
            depth = 1;
            restStart = i;
          }
          continue;
        }
        if (segStart < 0) segStart = i;
        if (b === QUOTE) inString = true;
        else if (b === OPEN_OBJ || b === OPEN_ARR) depth++;
        else if (b === CLOSE_OBJ || b === CLOSE_ARR) depth--;
        continue;
      }
      if (inResults) {
        // Between elements of `results` (depth 2): whitespace and commas; anything else starts an element.
        if (isSpace(b) || b === COMMA) continue;
        if (b === CLOSE_ARR) {
          inResults = false;
          depth = 1;
          restStart = i;
          continue;
        }
        if (b === OPEN_OBJ && this.flatFastPath) {
          text ??= chunk.toString('latin1');
          // A run of adjacent results that match (`{…},{…},…`) is copied in one step: its bytes up to and including the
          // last one's separator, each separator then overwritten by the newline that ends its line. That is the bytes
          // the result-by-result copy gave (each result's bytes and a newline), without a copy call per result (about
          // 0.05 s of the JS thread per 504,000-result file, issue 22 item 3).
          let at = i;
          let seps = 0;
          let lastSep = -1;
          // The run's first `renames` results are renamable (a prefix: once a result is not, none is after it).
          let renames = 0;
          for (;;) {
            // A plain result is flat too; while the file is plain, its results are tried as plain first (one pass each),
            // and while it is renamable, as renamable (a renamable result is plain).
            let end = -1;
            let plainHit = false;
            let renameHit = false;
            if (this.renamed) {
              RENAMABLE_RESULT.lastIndex = at;
              renameHit = RENAMABLE_RESULT.test(text);
              if (renameHit) {
                end = RENAMABLE_RESULT.lastIndex;
                plainHit = true;
              }
            }
            if (end < 0 && this.plain) {
              PLAIN_RESULT.lastIndex = at;
              plainHit = PLAIN_RESULT.test(text);
              if (plainHit) end = PLAIN_RESULT.lastIndex;
            }
            if (end < 0) {
              FLAT_RESULT.lastIndex = at;
              if (FLAT_RESULT.test(text)) end = FLAT_RESULT.lastIndex;
            }
            // No match: the run ends before this result, which the code below takes as before (it tries it again).
            if (end < 0) break;
            if (!plainHit) this.plain = false;
            // Not renamable (a result the run cannot match may still be, whole with the next chunk: it is tried again).
            if (renameHit) renames++;
            else this.renamed = false;
            lastSep = end - 1;
            this.sepAt[seps++] = lastSep;
            this.elements++;
            if (chunk[lastSep] === CLOSE_ARR || lastSep + 1 >= n || chunk[lastSep + 1] !== OPEN_OBJ) break;
            at = lastSep + 1;
          }
          if (seps > 0) {
            const o0 = o - i;
            o += chunk.copy(out, o, i, lastSep + 1);
            for (let k = 0; k < seps; k++) out[o0 + this.sepAt[k]!] = NEWLINE;
            // A renamable result has a `T` exactly when it begins `{"T":`; its `T` is written as `_`.
            for (let k = 0; k < renames; k++) {
              const start = k === 0 ? i : this.sepAt[k - 1]! + 1;
              if (chunk[start + 2] === T_BYTE && chunk[start + 3] === QUOTE) {
                out[o0 + start + 2] = RENAMED_BYTE;
                this.renamedResults++;
              }
            }
            if (chunk[lastSep] === CLOSE_ARR) {
              inResults = false;
              depth = 1;
              restStart = lastSep;
            }
            i = lastSep;
            continue;
          }
          if (!last && n - i <= MAX_CARRY_BYTES) {
            // Most likely a result cut by the chunk's end: its bytes are kept and scanned again at the front of the next
            // chunk (as if the two were one), so a file's results are matched whole whatever the chunking.
            carryFrom = i;
            break;
          }
        }
        this.plain = false;
        this.renamed = false;
        inElement = true;
        segStart = i;
        if (b === QUOTE) inString = true;
        else if (b === OPEN_OBJ || b === OPEN_ARR) depth++;
        continue;
      }
      // The rest of the document.
      if (restStart < 0) restStart = i;
      if (b === QUOTE) {
        inString = true;
        if (depth === 1 && keyPos) this.keyBytes = [];
      } else if (b === OPEN_OBJ || b === OPEN_ARR) {
        if (depth === 1 && b === OPEN_ARR && !keyPos && this.lastKey === 'results') {
          this.addRest(chunk.subarray(restStart, i + 1)); // keeps `[`
          restStart = -1;
          inResults = true;
          depth = 2;
          continue;
        }
        depth++;
        if (depth === 1) keyPos = true;
      } else if (b === CLOSE_OBJ || b === CLOSE_ARR) {
        depth--;
        if (depth < 0) throw new ParseError('invalid JSON: unbalanced brackets', { file: this.file, position: this.offset + i });
      } else if (depth === 1 && b === COMMA) keyPos = true;
      else if (depth === 1 && b === COLON) keyPos = false;
    }
    if (inElement) {
      if (segStart >= 0) o += chunk.copy(out, o, segStart, n);
    } else if (restStart >= 0 && n > restStart) this.addRest(chunk.subarray(restStart, n));
    if (o > 0) this.emit(out.subarray(0, o));
    this.depth = depth;
    this.inString = inString;
    this.escape = escaped;
    this.inResults = inResults;
    this.inElement = inElement;
    this.keyPos = keyPos;
    if (carryFrom >= 0) {
      this.carry = Buffer.from(chunk.subarray(carryFrom));
      this.offset += carryFrom;
    } else this.offset += n;
  }

  /**
   * Scans the bytes kept from the last chunk (a result cut by the chunk's end may be the file's last): call it once the
   * whole file was pushed and before closing what `emit` writes to, since it may emit the last lines. `end` calls it too.
   */
  flush(): void {
    if (!this.carry) return;
    const rest = this.carry;
    this.carry = null;
    this.scan(rest, true);
  }

  /** The document without its results' elements (JSON text), once the whole file was pushed. */
  end(): string {
    this.flush();
    if (this.inString || this.inElement || this.inResults || this.depth !== 0)
      throw new ParseError('invalid JSON: the document ends early', { file: this.file, position: this.offset });
    return Buffer.concat(this.rest).toString('utf8');
  }

  /** The buffer a chunk's lines are gathered in (reuseOutput: one, grown when a chunk needs more). */
  private outputBuffer(size: number): Buffer {
    if (!this.reuseOutput) return Buffer.allocUnsafe(size);
    if (!this.out || this.out.length < size) this.out = Buffer.allocUnsafeSlow(Math.max(size, 1 << 20) + 4096);
    return this.out;
  }

  private addRest(bytes: Buffer): void {
    this.restBytes += bytes.length;
    if (this.restBytes > MAX_REST_BYTES)
      throw new ParseError(`invalid Polygon response: more than ${MAX_REST_BYTES} bytes outside results`, {
        file: this.file,
        position: this.offset,
      });
    this.rest.push(Buffer.from(bytes));
  }
}
