/**
 * The served snapshot's carrier_name_sets store (ingest/fmcsa/name-sets.ts), decoded on demand: its header (the
 * dictionary's terms) once per store, and its sets, DOT blocks, pair lists and digit-run blocks kept, the least
 * recently used dropped first, up to a byte budget (NAME_SETS_CACHE_BYTES), so a name search reads and decodes each
 * record it needs once, and a store of any size holds bounded memory. One cache per store: a snapshot swap drops it
 * with the store.
 */
import {
  decodeDotBlock,
  decodeOrdSet,
  dotBlockKey,
  NAME_SETS_HEADER_KEY,
  NameSetsScratch,
  type NameSetsHeader,
  type NameSetsSource,
  type OrdSet,
  type DigitBlock,
  digitsBlockKey,
  type PairList,
  pairListKey,
  TermFinder,
} from '../../ingest/fmcsa/name-sets.ts';
import type { PackedStore } from '../../lib/warehouse/packed-store.ts';

/** Decoded records kept per store, in bytes (the full-scale sample's word sets, states and DOTs alone: ~70 MB). */
export const NAME_SETS_CACHE_BYTES = 160 * 2 ** 20;

type Entry = OrdSet | Int32Array | PairList | DigitBlock | null;
/** Bytes an entry holds (a pair list: about 64 per pair, a digit block about 48 per run, as JS values). */
const sizeOf = (e: Entry) =>
  e === null
    ? 16
    : e instanceof Int32Array
      ? e.byteLength
      : Array.isArray(e)
        ? 64 * e.length + 16
        : 'runs' in e
          ? 48 * e.runs.length + 16
          : (e.bits ?? e.list).byteLength;

export class NameSetsCache implements NameSetsSource {
  readonly finder: TermFinder;
  readonly scratch: NameSetsScratch;
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;

  private constructor(
    private readonly store: PackedStore,
    readonly header: NameSetsHeader,
    private readonly budget: number,
  ) {
    this.finder = new TermFinder(header.terms);
    this.scratch = new NameSetsScratch(header.n);
  }

  /** The cache of `store`, or null when the store has no header (not a sets store). */
  static open(store: PackedStore, budget = NAME_SETS_CACHE_BYTES): NameSetsCache | null {
    const text = store.read(NAME_SETS_HEADER_KEY);
    if (text === null) return null;
    return new NameSetsCache(store, JSON.parse(text) as NameSetsHeader, budget);
  }

  private entry(key: number, decode: (text: string) => Entry): Entry {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const text = this.store.read(key);
    const e = text === null ? null : decode(text);
    this.entries.set(key, e);
    this.bytes += sizeOf(e);
    for (const [k, old] of this.entries) {
      if (this.bytes <= this.budget || k === key) break;
      this.entries.delete(k);
      this.bytes -= sizeOf(old);
    }
    return e;
  }

  set(key: number): OrdSet | null {
    return this.entry(key, decodeOrdSet) as OrdSet | null;
  }

  dots(block: number): Int32Array | null {
    return this.entry(dotBlockKey(block), decodeDotBlock) as Int32Array | null;
  }

  digits(block: number): DigitBlock | null {
    return this.entry(digitsBlockKey(this.header, block), (t) => JSON.parse(t) as DigitBlock) as DigitBlock | null;
  }

  pairs(term: number): PairList | null {
    return this.entry(pairListKey(this.header, term), (t) => JSON.parse(t) as PairList) as PairList | null;
  }

  /** Bytes of decoded entries held. */
  get heldBytes(): number {
    return this.bytes;
  }
}

const caches = new WeakMap<PackedStore, NameSetsCache | null>();

/** The cache of a served sets store (opened on first use). */
export function nameSetsCacheOf(store: PackedStore): NameSetsCache | null {
  let c = caches.get(store);
  if (c === undefined) {
    c = NameSetsCache.open(store);
    caches.set(store, c);
  }
  return c;
}
