/**
 * The receipt store: nonces issued by this or another process are found, an
 * unknown nonce reads only what was appended since the last read, and a line
 * still being written is picked up once complete.
 */
import { readFileSync } from 'node:fs';
import { appendFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashReceipt, type Receipt } from '../../service/receipts/receipt-chain.ts';
import { ReceiptStore } from '../../service/receipts/receipt-store.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const receipt = (i: number): Receipt => ({
  leaf_hash: i.toString(16).padStart(64, '0'),
  found: true,
  verified_at: '2026-11-25T00:00:00.000Z',
  nonce: i.toString(16).padStart(32, '0'),
  prev_nonce: null,
  prev_receipt_hash: null,
  key_id: 'test-key',
  signature: 'sig',
});

describe('ReceiptStore', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('proofline-receipts-');
  });
  afterAll(async () => removeDir(dir));

  it('finds receipts written before it opened, by itself and by another process, in a file read in chunks', async () => {
    const file = path.join(dir, 'a', 'receipts.jsonl');
    const writer = new ReceiptStore(file);
    // More than one read chunk (1 MiB) of receipts.
    for (let i = 0; i < 6000; i++) await writer.append(receipt(i));
    const reader = new ReceiptStore(file);
    expect(await reader.receiptHash(receipt(0).nonce)).toBe(hashReceipt(receipt(0)));
    expect(await reader.receiptHash(receipt(5999).nonce)).toBe(hashReceipt(receipt(5999)));
    await writer.append(receipt(7000)); // "another process"
    expect(await reader.receiptHash(receipt(7000).nonce)).toBe(hashReceipt(receipt(7000)));
  });

  it('has each receipt line in the file when append resolves, and follows the path when the file is moved or removed', async () => {
    const file = path.join(dir, 'd', 'receipts.jsonl');
    const store = new ReceiptStore(file);
    const lines = () => readFileSync(file, 'utf8').split('\n').filter(Boolean);
    await Promise.all([1, 2, 3].map((i) => store.append(receipt(i))));
    expect(lines().map((l) => JSON.parse(l).nonce)).toEqual([1, 2, 3].map((i) => receipt(i).nonce));
    await rename(file, `${file}.old`);
    await store.append(receipt(4));
    expect(lines()).toEqual([JSON.stringify(receipt(4))]);
    await rm(file);
    await rm(path.dirname(file), { recursive: true });
    await store.append(receipt(5));
    expect(lines()).toEqual([JSON.stringify(receipt(5))]);
    expect(await new ReceiptStore(file).receiptHash(receipt(5).nonce)).toBe(hashReceipt(receipt(5)));
    store.close();
  });

  it('reads only the appended bytes for an unknown nonce, never the whole file again', async () => {
    const file = path.join(dir, 'b', 'receipts.jsonl');
    const store = new ReceiptStore(file);
    for (let i = 0; i < 2000; i++) await store.append(receipt(i));
    const fresh = new ReceiptStore(file);
    expect(await fresh.receiptHash(receipt(1).nonce)).not.toBeNull();
    const afterLoad = fresh.bytesRead;
    for (let i = 0; i < 50; i++) expect(await fresh.receiptHash('f'.repeat(32))).toBeNull();
    expect(fresh.bytesRead).toBe(afterLoad);
  });

  it('skips a line still being written and parses it once its newline arrives', async () => {
    const file = path.join(dir, 'c', 'receipts.jsonl');
    const store = new ReceiptStore(file);
    await store.append(receipt(1));
    const line = JSON.stringify(receipt(2));
    const fresh = new ReceiptStore(file);
    await appendFile(file, line.slice(0, 40));
    expect(await fresh.receiptHash(receipt(2).nonce)).toBeNull();
    await appendFile(file, line.slice(40) + '\n');
    expect(await fresh.receiptHash(receipt(2).nonce)).toBe(hashReceipt(receipt(2)));
    expect(await fresh.receiptHash(receipt(1).nonce)).toBe(hashReceipt(receipt(1)));
  });

  it('answers null without a file', async () => {
    expect(await new ReceiptStore(path.join(dir, 'none', 'receipts.jsonl')).receiptHash(receipt(1).nonce)).toBeNull();
    await writeFile(path.join(dir, 'empty.jsonl'), '');
    expect(await new ReceiptStore(path.join(dir, 'empty.jsonl')).receiptHash(receipt(1).nonce)).toBeNull();
  });
});
