/**
 * Durable record of issued receipts. With the PostgreSQL state store
 * (DATABASE_URL) it is the `receipts` table (StateReceiptLog below), shared by
 * every API node. Embedded default: an append-only JSONL file owned by the
 * server (`DATA_DIR/state/receipts.jsonl`), one receipt per line, so a chain
 * can continue from a nonce issued before a restart. Lookups are a Map hit;
 * a nonce not in memory reads what the file gained since the last read
 * (another process on the same DATA_DIR may have issued it): never the whole
 * file again, so unknown nonces (a typo, a client probing) cost one `fstat`
 * and a read of the new bytes, not a re-parse of every receipt ever issued.
 * The file is read in chunks (no single string of its whole size). Appends
 * are single `write` calls of one line each (O_APPEND), so concurrent
 * writers do not interleave lines; a receipt's line is written before the
 * receipt is returned (it survives a crash of the process, not of the
 * machine: the line is not fsync'd).
 *
 * The append is one synchronous `write(2)` on a descriptor kept open (O_APPEND), not `appendFile` (open, write,
 * close: three trips through libuv's thread pool, which the DuckDB queries share: under load a receipt waited
 * for them, 6 ms of a 15 ms verify at small scale, issue 22). A page-cache write of one line costs microseconds;
 * the durability is the same (the line is in the file before the receipt is returned). The path is checked
 * (`stat`, same device and inode as the descriptor) before each write, so a file moved or removed meanwhile is
 * opened again, as `appendFile` by path did.
 */
import { closeSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { insertRowsSql, loadStatements, type StateStore } from '../platform/state.store.ts';
import { hashReceipt, type Receipt } from './receipt-chain.ts';

/** Where issued receipts are kept: what `prev_nonce` is resolved against. */
export interface ReceiptLog {
  /** The hash of the receipt issued with `nonce`, or null when none was. */
  receiptHash(nonce: string): Promise<string | null>;
  /** Records a receipt durably before it is returned to the client. */
  append(r: Receipt): Promise<void>;
}

const SQL = loadStatements('./receipts.state.sql', import.meta.url, ['receipt_hash']);
const INSERT_RECEIPT = insertRowsSql('receipts', {
  nonce: 'VARCHAR',
  prev_nonce: 'VARCHAR',
  receipt_hash: 'VARCHAR',
  receipt_json: 'VARCHAR',
  verified_at: 'VARCHAR',
});

/**
 * Receipts in the PostgreSQL state store (DATABASE_URL): every API node
 * appends to and resolves from one table, so a chain continues whichever node
 * answers the next lookup. A receipt is committed (synchronous_commit) before
 * it is returned. Hashes of receipts seen by this process are kept in memory.
 */
export class StateReceiptLog implements ReceiptLog {
  private readonly byNonce = new Map<string, string>();

  constructor(private readonly store: StateStore) {}

  async receiptHash(nonce: string): Promise<string | null> {
    const h = this.byNonce.get(nonce);
    if (h) return h;
    const rows = await this.store.query(SQL.receipt_hash, [nonce]);
    return rows[0] ? String(rows[0].receipt_hash) : null;
  }

  async append(r: Receipt): Promise<void> {
    const hash = hashReceipt(r);
    await this.store.write(async (tx) =>
      tx.defer(INSERT_RECEIPT, {
        nonce: r.nonce,
        prev_nonce: r.prev_nonce,
        receipt_hash: hash,
        receipt_json: JSON.stringify(r),
        verified_at: r.verified_at,
      }),
    );
    if (this.byNonce.size > 100_000) this.byNonce.clear();
    this.byNonce.set(r.nonce, hash);
  }
}

const CHUNK_BYTES = 1 << 20;

export class ReceiptStore implements ReceiptLog {
  private readonly byNonce = new Map<string, string>();
  /** Bytes of the file parsed so far (up to the end of its last complete line). */
  private offset = 0;
  private reading: Promise<void> | null = null;
  private fd: number | null = null;
  private fdIno = 0;
  private fdDev = 0;
  /** Bytes read from the file so far (tests: a lookup re-reads only what was appended). */
  bytesRead = 0;

  constructor(readonly file: string) {}

  static forDataDir(dataDir: string): ReceiptStore {
    return new ReceiptStore(path.join(dataDir, 'state', 'receipts.jsonl'));
  }

  /** Reads the lines appended since the last read; concurrent callers share one read. */
  private readNew(): Promise<void> {
    this.reading ??= this.doReadNew().finally(() => (this.reading = null));
    return this.reading;
  }

  private async doReadNew(): Promise<void> {
    const fh = await open(this.file, 'r').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    });
    if (!fh) return;
    try {
      const size = (await fh.stat()).size;
      if (size < this.offset) this.offset = 0; // replaced by a shorter file: start over
      if (size === this.offset) return; // nothing appended: the usual case for an unknown nonce
      const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - this.offset));
      let carry = Buffer.alloc(0);
      let pos = this.offset;
      while (pos < size) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        this.bytesRead += bytesRead;
        const data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        const end = data.lastIndexOf(10); // '\n'
        if (end < 0) {
          carry = Buffer.from(data);
          continue;
        }
        this.parseLines(data.toString('utf8', 0, end));
        carry = Buffer.from(data.subarray(end + 1));
      }
      // A last line without its newline is a write in progress (or torn by a crash): read again next time.
      this.offset = pos - carry.length;
    } finally {
      await fh.close();
    }
  }

  private parseLines(text: string): void {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const r = JSON.parse(line) as Receipt;
        this.byNonce.set(r.nonce, hashReceipt(r));
      } catch {
        // A line torn by a crash and followed by later appends: that receipt was never acknowledged.
      }
    }
  }

  /** The hash of the receipt issued with `nonce`, or null when none was. */
  async receiptHash(nonce: string): Promise<string | null> {
    const h = this.byNonce.get(nonce);
    if (h) return h;
    await this.readNew();
    return this.byNonce.get(nonce) ?? null;
  }

  /** The append descriptor, opened again when the path no longer names its file (moved, removed or replaced). */
  private appendFd(): number {
    if (this.fd !== null) {
      const now = statSync(this.file, { throwIfNoEntry: false });
      if (now && now.ino === this.fdIno && now.dev === this.fdDev) return this.fd;
      closeSync(this.fd);
      this.fd = null;
    }
    mkdirSync(path.dirname(this.file), { recursive: true });
    const fd = openSync(this.file, 'a');
    const st = fstatSync(fd);
    [this.fd, this.fdIno, this.fdDev] = [fd, st.ino, st.dev];
    return fd;
  }

  /** Appends a receipt before it is returned to the client: its whole line in one write (O_APPEND). */
  async append(r: Receipt): Promise<void> {
    const line = Buffer.from(JSON.stringify(r) + '\n');
    const fd = this.appendFd();
    let done = 0;
    // A regular file takes the whole buffer in one write; the loop only guards against a short write.
    while (done < line.length) done += writeSync(fd, line, done, line.length - done);
    this.byNonce.set(r.nonce, hashReceipt(r));
  }

  /** Closes the append descriptor (a later append opens it again). */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
