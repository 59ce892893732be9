/**
 * The per-request hashes use one-shot `crypto.hash` (no Hash object and native handle per call, issue 22): each
 * gives the digest `createHash` gives, over arbitrary texts (non-ASCII, lone surrogates) and bytes.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/hash.ts';
import { textKey } from '../../lib/warehouse/packed-store.ts';
import { etagOf } from '../../service/platform/response-cache.ts';

const texts = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constant(''),
  fc.constant('\ud800x'),
);

describe('one-shot hashes', () => {
  it('sha256Hex gives the createHash digest of texts and bytes', () => {
    fc.assert(fc.property(texts, (t) => sha256Hex(t) === createHash('sha256').update(t).digest('hex')));
    fc.assert(fc.property(fc.uint8Array(), (b) => sha256Hex(b) === createHash('sha256').update(b).digest('hex')));
  });
  it('etagOf gives the weak ETag of the createHash SHA-1', () => {
    fc.assert(fc.property(texts, (t) => etagOf(t) === `W/"${createHash('sha1').update(t).digest('base64url')}"`));
  });
  it('textKey gives the first 7 hex digits of the createHash MD5', () => {
    fc.assert(fc.property(texts, (t) => textKey(t) === Number.parseInt(createHash('md5').update(t).digest('hex').slice(0, 7), 16)));
    expect(textKey('1FUJX031UM0FD0000')).toBe(Number.parseInt(createHash('md5').update('1FUJX031UM0FD0000').digest('hex').slice(0, 7), 16));
  });
});
