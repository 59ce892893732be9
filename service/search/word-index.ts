/**
 * An inverted index of words for substring search, built once per snapshot.
 *
 * Contract: `match(tokens)` returns, in ascending document order, exactly the
 * documents where every token occurs as a substring of one of the document's
 * lower-cased fields — the same answer as scanning every field with
 * `includes`, without touching the documents. It holds because a query token
 * is a run of word characters (search.queries.ts `tokenize` splits on the same
 * separator class as `splitWords`), so it can only occur inside one maximal
 * run of word characters of a field: a token is in a field iff it is a
 * substring of one of the field's words. A token is looked up by scanning the
 * (much smaller) vocabulary, then the posting lists of the words that contain
 * it are merged.
 *
 * Layout: vocabulary sorted, postings in one Int32Array (CSR offsets), each
 * list ascending and duplicate-free. Memory is about 4 bytes per distinct
 * (document, word) pair.
 */

/** Word characters of search: letters, digits, `&`, `.`, `-`, `'` (the query tokenizer's class). */
export const WORD_SEPARATORS = /[^\p{L}\p{N}&.\-']+/u;

/** The distinct words of an already lower-cased text. */
export function splitWords(text: string): string[] {
  return text.split(WORD_SEPARATORS).filter((w) => w.length > 0);
}

/** Ids the per-token union cache of one index may hold (4 bytes each: 16 MB). */
const UNION_CACHE_INTS = 4_000_000;

export class WordIndex {
  private readonly tokenCache = new Map<string, Int32Array>();
  private cachedInts = 0;

  private constructor(
    readonly docCount: number,
    private readonly words: string[],
    private readonly offsets: Int32Array,
    private readonly postings: Int32Array,
  ) {}

  /** Indexes `docCount` documents; `fields(i)` gives document i's lower-cased texts. */
  static build(docCount: number, fields: (i: number) => Array<string | null | undefined>): WordIndex {
    const lists = new Map<string, number[]>();
    for (let i = 0; i < docCount; i++) {
      for (const f of fields(i)) {
        if (!f) continue;
        for (const w of splitWords(f)) {
          let l = lists.get(w);
          if (!l) lists.set(w, (l = []));
          if (l[l.length - 1] !== i) l.push(i); // documents are visited in order: lists stay ascending and unique
        }
      }
    }
    const words = [...lists.keys()].sort();
    const offsets = new Int32Array(words.length + 1);
    let n = 0;
    for (let k = 0; k < words.length; k++) {
      offsets[k] = n;
      n += lists.get(words[k]!)!.length;
    }
    offsets[words.length] = n;
    const postings = new Int32Array(n);
    for (let k = 0; k < words.length; k++) postings.set(lists.get(words[k]!)!, offsets[k]!);
    return new WordIndex(docCount, words, offsets, postings);
  }

  get vocabularySize(): number {
    return this.words.length;
  }

  /** Posting lists of every vocabulary word containing `token` (a scan of the vocabulary). */
  private listsFor(token: string): Int32Array[] {
    const lists: Int32Array[] = [];
    for (let k = 0; k < this.words.length; k++) {
      if (this.words[k]!.includes(token)) lists.push(this.postings.subarray(this.offsets[k]!, this.offsets[k + 1]!));
    }
    return lists;
  }

  /**
   * Ascending, duplicate-free ids of the documents containing `token`: the union of its words' posting lists,
   * memoised per token (bounded: at most 5,000 tokens and UNION_CACHE_INTS ids in all; the cache is dropped whole
   * past either), so a repeated token costs neither the vocabulary scan nor the merge (issue 22: the merge marked a
   * byte per document, a pass over all 167 k timeline events at full scale for every search whose token is inside
   * several words).
   */
  private unionFor(token: string): Int32Array {
    const hit = this.tokenCache.get(token);
    if (hit) return hit;
    const lists = this.listsFor(token);
    let total = 0;
    for (const l of lists) total += l.length;
    let out: Int32Array;
    if (lists.length <= 1) out = lists[0] ?? new Int32Array(0);
    else if (total * 8 > this.docCount) {
      // Dense: mark and collect in document order.
      const seen = new Uint8Array(this.docCount);
      for (const l of lists) for (let j = 0; j < l.length; j++) seen[l[j]!] = 1;
      let n = 0;
      for (let d = 0; d < seen.length; d++) n += seen[d]!;
      out = new Int32Array(n);
      n = 0;
      for (let d = 0; d < seen.length; d++) if (seen[d]) out[n++] = d;
    } else {
      // Sparse: concatenate, sort, drop duplicates.
      const all = new Int32Array(total);
      let n = 0;
      for (const l of lists) {
        all.set(l, n);
        n += l.length;
      }
      all.sort();
      let m = 0;
      for (let j = 0; j < all.length; j++) if (j === 0 || all[j] !== all[j - 1]) all[m++] = all[j]!;
      out = all.subarray(0, m);
    }
    if (this.tokenCache.size >= 5000 || this.cachedInts + out.length > UNION_CACHE_INTS) {
      this.tokenCache.clear();
      this.cachedInts = 0;
    }
    // A single word's list is a view of the postings (no memory of its own).
    if (lists.length > 1) this.cachedInts += out.length;
    this.tokenCache.set(token, out);
    return out;
  }

  /** Ascending ids of the documents containing every token (see the module contract). Callers must not modify it. */
  match(tokens: readonly string[]): Int32Array {
    if (tokens.length === 0) return new Int32Array(0);
    const sets = tokens.map((t) => this.unionFor(t)).sort((a, b) => a.length - b.length);
    let acc = sets[0]!;
    // Intersect from the smallest set (two sorted lists, one pass each).
    for (let s = 1; s < sets.length && acc.length > 0; s++) {
      const other = sets[s]!;
      const out = new Int32Array(acc.length);
      let n = 0;
      let j = 0;
      for (let i = 0; i < acc.length; i++) {
        const v = acc[i]!;
        while (j < other.length && other[j]! < v) j++;
        if (j === other.length) break;
        if (other[j] === v) out[n++] = v;
      }
      acc = out.subarray(0, n);
    }
    return acc;
  }
}
