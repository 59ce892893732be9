/**
 * The hot-response cache: serialized 200 (and 404) bodies of snapshot-determined GET
 * routes (`/api/company/{ticker}` and the like), keyed by path + query string.
 * DuckDB point lookups top out near 1,100/s on this hardware (tech.md), so a
 * hit skips the handler entirely. Bounded by entry count and bytes.
 *
 * Correctness across snapshots: `clear()` is called on every reader swap and
 * bumps `generation`; a response computed before a swap is not inserted after
 * it (`set` takes the generation read before the handler ran).
 */
import { hash } from 'node:crypto';
import type { MeterClass } from './usage.service.ts';
import type { EncodedLogRequest } from './query-log.ts';

export interface CachedResponse {
  /** 200, or 404 for a snapshot-determined miss (an unknown ticker costs a DuckDB lookup only once per snapshot). */
  status: number;
  /** The JSON body as the handler produced it (without usage_meta). */
  json: string;
  /** Weak ETag of `json`. */
  etag: string;
  /** Ticker the response is about, for the query log (null when none). */
  ticker: string | null;
  contentType: string;
  /** The page's `Link: <next>; rel="next"` header (pagination.ts), null when it has none. */
  link: string | null;
  /** Byte parts for the node:http hot path, built on the first hit (service/platform/hot-path.ts). */
  hot: HotEntry | null;
}

/** A cache entry's pre-encoded parts: the body up to usage_meta (null when the body is not a JSON object) and the query-log request members. */
export interface HotEntry {
  head: Buffer | null;
  /** UTF-16 length of the text of `head`. */
  headChars: number;
  logRequest: EncodedLogRequest;
  /** The meter class of the entry's path (meterClassOf), so a hit does not test the path's patterns again. */
  meterClass: MeterClass;
  /**
   * The hot answer's status line and headers up to `vary: ` (latin1, as node writes headers), and from the Link
   * header (when the entry has one) to `content-length: `, then the ETag line (200s) and the line end after
   * content-length: the constant parts of the wire form (HotAnswer.wire in hot-path.ts).
   */
  wireHead: Buffer;
  wireLength: Buffer;
  wireEtag: Buffer;
}

export interface ResponseCacheOptions {
  /** 0: the cache is off (nothing is stored; config RESPONSE_CACHE_ENTRIES). */
  maxEntries?: number;
  maxBytes?: number;
}

/**
 * Weak ETag over a body: W/"<base64url SHA-1>". Weak because usage_meta (merged after) varies per request. One-shot
 * `crypto.hash` (the digest `createHash` gives, without a Hash object and its native handle per answer).
 */
export function etagOf(body: string): string {
  return `W/"${hash('sha1', body, 'base64url')}"`;
}

interface Slot {
  value: CachedResponse;
  /** Set by get(), cleared when eviction passes over the slot (second chance). */
  used: boolean;
  size: number;
}

/**
 * Bounded by entry count and bytes; eviction is second-chance (CLOCK): the
 * oldest slot not read since eviction last passed it goes first. A hit costs
 * one Map lookup and a flag write (a strict LRU moved the entry to the end of
 * the Map on every hit: a delete and a set per request on the hot path).
 */
export class ResponseCache {
  private readonly map = new Map<string, Slot>();
  private bytes = 0;
  generation = 0;
  hits = 0;
  misses = 0;
  readonly maxEntries: number;
  readonly maxBytes: number;

  constructor(opts: ResponseCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 50_000;
    this.maxBytes = opts.maxBytes ?? 128 * 1024 * 1024;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): CachedResponse | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    slot.used = true;
    return slot.value;
  }

  /** Stores `value` unless the cache was cleared since `generation` was read, or is off (`maxEntries` 0). */
  set(key: string, value: CachedResponse, generation: number): void {
    if (generation !== this.generation || this.maxEntries === 0) return;
    const size = value.json.length * 2 + key.length * 2 + 200;
    if (size > this.maxBytes / 4) return;
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.bytes -= old.size;
    }
    this.map.set(key, { value, used: false, size });
    this.bytes += size;
    while (this.map.size > this.maxEntries || this.bytes > this.maxBytes) {
      const first = this.map.entries().next();
      if (first.done) break;
      const [k, slot] = first.value;
      if (this.map.size === 1) break;
      this.map.delete(k);
      if (slot.used || k === key) {
        // Second chance: read since eviction last passed it (or just stored), so it moves to the young end.
        slot.used = false;
        this.map.set(k, slot);
        continue;
      }
      this.bytes -= slot.size;
    }
  }

  /** Drops everything (a snapshot was swapped). */
  clear(): void {
    this.map.clear();
    this.bytes = 0;
    this.generation++;
  }
}

/** GET routes whose 200 bodies depend only on the published snapshots (cached until the next swap). */
export const CACHEABLE_PREFIXES = ['/api/company/', '/api/person/', '/api/search', '/api/signals'];

/** True for a path under one of CACHEABLE_PREFIXES. */
export function isCacheable(pathname: string): boolean {
  for (const p of CACHEABLE_PREFIXES) if (pathname.startsWith(p)) return true;
  return false;
}
