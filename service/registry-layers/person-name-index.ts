/**
 * The person-name index of one registry snapshot (issue 22 item 2), built in memory once per snapshot from
 * person-names.sql's rows (at the process warm-up, which answers /api/person once), so a name search visits only
 * the names that can contain the query instead of every name of the snapshot.
 *
 * Contract: `match(q, limit)` is `scanPersonNames(entries, q, limit)` (the scan getPerson ran before): the first
 * `limit` person keys, in UTF-8 byte order (as DuckDB orders VARCHAR: find-person.sql's ORDER BY person_key), one of
 * whose comparison names contains `q` as a substring (`String.prototype.includes`, no other rule: case and
 * punctuation were removed from both by the caller and person-names.sql), each with its registry_person record id.
 * It holds because every substring of length n of `q` is a substring of any name containing `q`: the names holding
 * the rarest n-gram of `q` (n = 3, or 2 for a two-character query) are a superset of the matches, and each is checked
 * with `includes`. Entries are numbered in key order, so walking that posting list in order yields the matching
 * keys in order and the walk stops at `limit` keys.
 *
 * Layout: entries sorted by key; one posting list (ascending entry ids, duplicate-free) per distinct bigram and
 * trigram of the names, in one Int32Array (CSR offsets). Memory: about 4 bytes per (name, n-gram) pair.
 */

/** One comparison name of a person (person-names.sql: a person with several spellings has several). */
export interface PersonNameEntry {
  key: string;
  /** The key of the person's registry_person record (jobs/registry/packed-person.sql). */
  pid: number;
  name: string;
}

/** True when `s` has no UTF-16 surrogate (then code-unit order is code-point order, which is UTF-8 byte order). */
function bmpBelowSurrogates(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0xd800) return false;
  return true;
}

/** UTF-8 byte order, as DuckDB orders VARCHAR. */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  if (bmpBelowSurrogates(a) && bmpBelowSurrogates(b)) return a < b ? -1 : 1;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The reference scan (getPerson's search before the index; the index's tests compare with it): every name that
 * contains `q`, their keys sorted in UTF-8 byte order, the first `limit`, each with its record id.
 */
export function scanPersonNames(entries: readonly PersonNameEntry[], q: string, limit: number): Map<string, number> {
  const hit = new Map<string, number>();
  for (const p of entries) if (p.name.includes(q)) hit.set(p.key, p.pid);
  const keys = [...hit.keys()].sort(compareUtf8).slice(0, limit);
  return new Map(keys.map((k) => [k, hit.get(k)!]));
}

export class PersonNameIndex {
  private constructor(
    /** Entries in key order (ids = positions). */
    private readonly keys: string[],
    private readonly pids: Int32Array,
    private readonly names: string[],
    private readonly grams: Map<string, number>,
    private readonly offsets: Int32Array,
    private readonly postings: Int32Array,
  ) {}

  static build(entries: readonly PersonNameEntry[]): PersonNameIndex {
    const sorted = [...entries].sort((a, b) => compareUtf8(a.key, b.key));
    const lists = new Map<string, number[]>();
    const add = (g: string, id: number) => {
      let l = lists.get(g);
      if (!l) lists.set(g, (l = []));
      if (l[l.length - 1] !== id) l.push(id); // ids are visited in order: each list stays ascending and unique
    };
    for (let id = 0; id < sorted.length; id++) {
      const s = sorted[id]!.name;
      for (let i = 0; i + 2 <= s.length; i++) add(s.slice(i, i + 2), id);
      for (let i = 0; i + 3 <= s.length; i++) add(s.slice(i, i + 3), id);
    }
    const grams = new Map<string, number>();
    const offsets = new Int32Array(lists.size + 1);
    let n = 0;
    let g = 0;
    for (const [gram, l] of lists) {
      grams.set(gram, g);
      offsets[g++] = n;
      n += l.length;
    }
    offsets[g] = n;
    const postings = new Int32Array(n);
    for (const [gram, l] of lists) postings.set(l, offsets[grams.get(gram)!]!);
    return new PersonNameIndex(
      sorted.map((e) => e.key),
      Int32Array.from(sorted, (e) => e.pid),
      sorted.map((e) => e.name),
      grams,
      offsets,
      postings,
    );
  }

  get size(): number {
    return this.names.length;
  }

  /** The entries whose name may contain `q` (ascending ids): the rarest n-gram's list, or every entry for a 1-character query. */
  private candidates(q: string): Int32Array | null {
    const n = q.length >= 3 ? 3 : 2;
    if (q.length < n) return null;
    let best: Int32Array | null = null;
    for (let i = 0; i + n <= q.length; i++) {
      const g = this.grams.get(q.slice(i, i + n));
      if (g === undefined) return new Int32Array(0); // no name holds this n-gram: none holds q
      const list = this.postings.subarray(this.offsets[g]!, this.offsets[g + 1]!);
      if (!best || list.length < best.length) best = list;
    }
    return best;
  }

  /** The first `limit` keys (byte order) one of whose names contains `q`, each with its record id (see the module contract). */
  match(q: string, limit: number): Map<string, number> {
    const hit = new Map<string, number>();
    const ids = this.candidates(q);
    const n = ids ? ids.length : this.names.length;
    let last: string | null = null;
    for (let k = 0; k < n; k++) {
      const id = ids ? ids[k]! : k;
      if (!this.names[id]!.includes(q)) continue;
      const key = this.keys[id]!;
      if (key === last) continue;
      if (hit.size === limit) break;
      hit.set(key, this.pids[id]!);
      last = key;
    }
    return hit;
  }
}
