/**
 * Object merging for request paths that keeps V8's hidden classes shared (issue 22 item 2, docs/benchmarks-history.md
 * "Where the warm p99 tail comes from").
 *
 * `withMembers(a, b, c)` is `{ ...a, ...b, ...c }`: the members of each source in order, a member already present
 * keeping its place and taking the later value (the same key order, so the same JSON text). It is not written as
 * that literal because V8 (node 20) builds a literal that begins with a spread by cloning the source's hidden class
 * into one outside the transition tree: every member added after the spread then gives each result a hidden class
 * (map) and descriptor array of its own. On a request path that is one map per answer row: the maps are allocated
 * in the old generation and their descriptor arrays survive every young-generation GC that finds them, so each
 * request left 0.2–16 KB that only a full mark-compact frees (measured with `--trace-gc-nvp`). `Object.assign` onto
 * an empty object adds the members through the transition tree, so results of one shape share one map. A literal
 * that begins with its own members (`{ a, ...b }`) and a lone spread (`{ ...a }`, not mutated afterwards) are not
 * affected; a lone spread whose result then takes more members is (`const o = { ...a }; o.x = 1`): `withMembers(a)` is the
 * copy to add members to.
 */
export function withMembers<A extends object>(a: A): A;
export function withMembers<A extends object, B extends object>(a: A, b: B): Omit<A, keyof B> & B;
export function withMembers<A extends object, B extends object, C extends object>(
  a: A,
  b: B,
  c: C,
): Omit<Omit<A, keyof B> & B, keyof C> & C;
export function withMembers(...sources: object[]): object {
  return Object.assign({}, ...sources);
}
