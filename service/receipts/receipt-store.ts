/**
 * Durable record of issued receipts: an append-only JSONL file owned by the
 * server (`DATA_DIR/state/receipts.jsonl`), one receipt per line, so a chain
 * can continue from a nonce issued before a restart. Lookups are a Map hit;
 * a nonce not in memory triggers one re-read of the file (another process on
 * the same DATA_DIR may have issued it). Appends are single `write` calls of
 * one line each (O_APPEND), so concurrent writers do not interleave lines.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { hashReceipt, type Receipt } from './receipt-chain.ts';

export class ReceiptStore {
  private readonly byNonce = new Map<string, string>();
  private loaded: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  static forDataDir(dataDir: string): ReceiptStore {
    return new ReceiptStore(path.join(dataDir, 'state', 'receipts.jsonl'));
  }

  private async reload(): Promise<void> {
    const text = await readFile(this.file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '';
      throw e;
    });
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const r = JSON.parse(line) as Receipt;
        this.byNonce.set(r.nonce, hashReceipt(r));
      } catch {
        // A torn last line after a crash: skip it (that receipt was never acknowledged).
      }
    }
  }

  /** The hash of the receipt issued with `nonce`, or null when none was. */
  async receiptHash(nonce: string): Promise<string | null> {
    this.loaded ??= this.reload();
    await this.loaded;
    const h = this.byNonce.get(nonce);
    if (h) return h;
    await this.reload();
    return this.byNonce.get(nonce) ?? null;
  }

  /** Appends a receipt durably before it is returned to the client. */
  async append(r: Receipt): Promise<void> {
    const line = JSON.stringify(r) + '\n';
    const write = this.tail.then(async () => {
      await mkdir(path.dirname(this.file), { recursive: true });
      await appendFile(this.file, line);
    });
    this.tail = write.catch(() => undefined);
    await write;
    this.byNonce.set(r.nonce, hashReceipt(r));
  }
}
