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

export class WordIndex {
  private readonly tokenCache = new Map<string, Int32Array[]>();

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

  /** Posting lists of every vocabulary word containing `token` (memoised per token, bounded). */
  private listsFor(token: string): Int32Array[] {
    let lists = this.tokenCache.get(token);
    if (!lists) {
      lists = [];
      for (let k = 0; k < this.words.length; k++) {
        if (this.words[k]!.includes(token)) lists.push(this.postings.subarray(this.offsets[k]!, this.offsets[k + 1]!));
      }
      if (this.tokenCache.size >= 5000) this.tokenCache.clear();
      this.tokenCache.set(token, lists);
    }
    return lists;
  }

  /** Ascending ids of the documents containing every token (see the module contract). */
  match(tokens: readonly string[]): Int32Array {
    if (tokens.length === 0) return new Int32Array(0);
    const perToken = tokens.map((t) => this.listsFor(t));
    if (perToken.some((l) => l.length === 0)) return new Int32Array(0);
    if (tokens.length === 1 && perToken[0]!.length === 1) return perToken[0]![0]!;
    // count[d] = how many of the tokens processed so far document d contains; a document advances only from
    // the previous count, so several words of one token never count twice.
    const count = new Uint8Array(this.docCount);
    perToken.forEach((lists, i) => {
      for (const l of lists) for (let j = 0; j < l.length; j++) if (count[l[j]!] === i) count[l[j]!] = i + 1;
    });
    const want = tokens.length;
    let n = 0;
    for (let d = 0; d < count.length; d++) if (count[d] === want) n++;
    const out = new Int32Array(n);
    n = 0;
    for (let d = 0; d < count.length; d++) if (count[d] === want) out[n++] = d;
    return out;
  }
}
