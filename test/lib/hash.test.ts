import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, canonicalJsonReusing, hashCanonical, hashFile, sha256Hex } from '../../lib/hash.ts';
import { createLeaf, createRecordLeaf, createSourceLeaf, unsignedLeafHash, verifyChain, verifyLeaf } from '../../lib/origin.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys recursively and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });
  it('writes numbers in ECMAScript shortest form', () => {
    expect(canonicalJson([1e21, 1e-7, 0.1, -0, 100, 1.5e300, 333333333.3333333])).toBe('[1e+21,1e-7,0.1,0,100,1.5e+300,333333333.3333333]');
  });
  it('escapes only what JSON requires and keeps unicode as is', () => {
    expect(canonicalJson({ s: 'é€😀\u0007"\\\n' })).toBe('{"s":"é€😀\\u0007\\"\\\\\\n"}');
  });
  it('sorts keys by UTF-16 code units', () => {
    expect(canonicalJson({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, '\u0080': 4, '1': 5 })).toBe('{"\\r":2,"1":5,"\u0080":4,"€":1,"😀":3}');
  });
  it('refuses values JSON cannot carry', () => {
    expect(() => canonicalJson(10n)).toThrow();
    expect(() => canonicalJson(undefined)).toThrow();
  });
});

describe('canonicalJsonReusing', () => {
  it('splices a member canonicalized before and equals canonicalJson of the whole', () => {
    const features = { z: [1, 2, { b: 'é', a: null }], a: 1e21, m: { '\u20ac': 1, '\r': 2 } };
    const known = new Map<object, string>([[features, canonicalJson(features)]]);
    const doc = { features, schema: 'x@1', skipped: undefined, warehouse_features: features, nested: { features }, n: -0 };
    expect(canonicalJsonReusing(doc, known)).toBe(canonicalJson(doc));
    expect(canonicalJsonReusing(doc, new Map())).toBe(canonicalJson(doc));
  });
  it('uses the known text as given: the caller vouches that it is the canonical form of the member', () => {
    const member = { a: 1 };
    expect(canonicalJsonReusing({ m: member }, new Map([[member, '{"a":2}']]))).toBe('{"m":{"a":2}}');
  });
});

describe('sha256Hex', () => {
  it('hashes UTF-8 strings and bytes alike (golden)', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(Buffer.from('abc'))).toBe(sha256Hex('abc'));
  });
  it('pins the hash of a nested object with numbers and unicode', () => {
    const doc = { name: 'Société Générale', cik: 320193, values: [1.25, -0, 1e21], nested: { b: true, a: null } };
    expect(canonicalJson(doc)).toBe('{"cik":320193,"name":"Société Générale","nested":{"a":null,"b":true},"values":[1.25,0,1e+21]}');
    expect(hashCanonical(doc)).toBe(
      sha256Hex('{"cik":320193,"name":"Société Générale","nested":{"a":null,"b":true},"values":[1.25,0,1e+21]}'),
    );
    expect(hashCanonical(doc)).toMatchInlineSnapshot(`"6297b63b901d07579250033012b063f8ea6c09bb16589ff2d568954d90af08f4"`);
  });
});

describe('hashFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(async () => removeDir(dir));

  it('gives the SHA-256 and size of the whole file (golden), whether it is read in one chunk or many', async () => {
    const abc = path.join(dir, 'abc');
    await writeFile(abc, 'abc');
    expect(await hashFile(abc)).toEqual({ sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', bytes: 3 });
    const empty = path.join(dir, 'empty');
    await writeFile(empty, '');
    expect(await hashFile(empty)).toEqual({ sha256: sha256Hex(''), bytes: 0 });
    // Sizes around the 1 MB chunk: one chunk exactly, one byte into a second, and several chunks.
    for (const size of [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3.5 * (1 << 20)]) {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 7919 + (i >>> 11)) & 0xff;
      const file = path.join(dir, `f${size}`);
      await writeFile(file, bytes);
      expect(await hashFile(file)).toEqual({ sha256: sha256Hex(bytes), bytes: size });
    }
  });

  it('rejects with the file system error for a missing file', async () => {
    await expect(hashFile(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('origin leaves', () => {
  const src = {
    source: 'sec-edgar/submissions',
    source_url: 'https://data.sec.gov/submissions/CIK0000320193.json',
    retrieved_at: null,
    content_sha256: 'a'.repeat(64),
    byte_size: 10,
  };
  it('pins a source leaf hash (golden)', () => {
    const leaf = createSourceLeaf(src);
    expect(leaf.leaf_hash).toMatchInlineSnapshot(`"12b0992bce8e10d67ee284beff07f0363bf4bbd7250b494afac203d08dffb4d0"`);
    expect(verifyLeaf(leaf)).toBe(true);
  });
  it('computes leaf_hash as SHA-256 of the canonical leaf without leaf_hash', () => {
    const leaf = createRecordLeaf({ cik: 320193, name: 'Apple Inc.' }, src);
    const { leaf_hash, ...rest } = leaf;
    expect(leaf_hash).toBe(sha256Hex(canonicalJson(rest)));
    expect(leaf.parent).toBe(createSourceLeaf(src).leaf_hash);
    expect(leaf.record_sha256).toBe(hashCanonical({ cik: 320193, name: 'Apple Inc.' }));
    expect(leaf_hash).toMatchInlineSnapshot(`"c4e90fb675cada8cb4b43b4299b3b241b2a43d9f8164558ec400fd113949c199"`);
  });
  it("writes a leaf's canonical text from its template exactly as the canonicalizer does, for any member value", () => {
    const texts = [
      '',
      'a',
      'sec-edgar/submissions',
      'https://x.example/a?b=1&c=%20',
      'a"b',
      'a\\b',
      'tab\there',
      'nl\n',
      '\u0001',
      '\u007f',
      'é',
      'Ünïcødé',
      '😀',
      '\u2028',
      ' ~!#$%&()*+,-./:;<=>?@[]^_`{|}',
    ];
    const values: unknown[] = [null, ...texts, 'f'.repeat(64), 0, 1.5, true, ['x'], { a: 1 }];
    const members = ['content_sha256', 'kind', 'parent', 'record_sha256', 'retrieved_at', 'source', 'source_url'] as const;
    const base: Record<string, unknown> = {
      alg: 'sha256',
      canon: 'rfc8785',
      content_sha256: 'a'.repeat(64),
      kind: 'record',
      parent: null,
      record_sha256: 'b'.repeat(64),
      retrieved_at: '2026-11-26T00:00:00.000Z',
      source: 'fmcsa/census',
      source_url: 'file:///x.csv',
    };
    const outcome = (f: () => string) => {
      try {
        return f();
      } catch (e) {
        return `throws ${(e as Error).message}`;
      }
    };
    let n = 0;
    for (const m of members)
      for (const v of values) {
        const u = { ...base, [m]: v };
        expect(
          outcome(() => unsignedLeafHash(u)),
          `${m}=${JSON.stringify(v)}`,
        ).toBe(outcome(() => hashCanonical(u)));
        n++;
      }
    for (const [alg, canon] of [
      ['sha256', 'jcs'],
      ['sha1', 'rfc8785'],
    ]) {
      const u = { ...base, alg, canon };
      expect(unsignedLeafHash(u)).toBe(hashCanonical(u));
    }
    expect(n).toBe(members.length * values.length);
  });
  it('detects a changed field', () => {
    const leaf = createRecordLeaf({ x: 1 }, src);
    expect(verifyLeaf({ ...leaf, record_sha256: 'b'.repeat(64) })).toBe(false);
    expect(verifyLeaf({ ...leaf, extra: 1 })).toBe(false);
  });
  it('walks and verifies a chain to its root', async () => {
    const root = createSourceLeaf(src);
    const a = createLeaf({
      kind: 'quote_day',
      source: 'q',
      source_url: null,
      retrieved_at: null,
      content_sha256: null,
      record_sha256: hashCanonical({ d: 1 }),
      parent: root.leaf_hash,
    });
    const b = createLeaf({
      kind: 'quote_day',
      source: 'q',
      source_url: null,
      retrieved_at: null,
      content_sha256: null,
      record_sha256: hashCanonical({ d: 2 }),
      parent: a.leaf_hash,
    });
    const store = new Map([root, a, b].map((l) => [l.leaf_hash, l]));
    const ok = await verifyChain(b.leaf_hash, (h) => store.get(h));
    expect(ok).toMatchObject({ valid: true, problem: null });
    expect(ok.leaves.map((l) => l.leaf_hash)).toEqual([b.leaf_hash, a.leaf_hash, root.leaf_hash]);
    store.set(a.leaf_hash, { ...a, record_sha256: hashCanonical({ d: 9 }) });
    expect((await verifyChain(b.leaf_hash, (h) => store.get(h))).valid).toBe(false);
  });
});
