/**
 * Investor-relations site client: fetches a transcript PDF (or any document)
 * over HTTP(S) and records how it was fetched, as evidence for the first leaf
 * of the transcript's origin chain (kind `fetch`):
 *
 *   {url, final_url, status, fetched_at, content_sha256, byte_size, content_type,
 *    addresses: [resolved IPs], remote_address, tls: {fingerprint256, subject, issuer, valid_from, valid_to, protocol} | null}
 *
 * The file is written with a `.meta.json` sidecar ({source_url, retrieved_at,
 * fetch}) that the transcripts pipeline turns into the fetch leaf. Uses
 * node:https directly (the shared HttpClient does not expose the socket);
 * declared User-Agent, timeout and body cap as everywhere. Tests run it
 * against a local HTTPS server with a self-signed certificate.
 */
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { writeFetchedFile } from '../fetched-file.ts';
import path from 'node:path';
import { NotFoundError, SourceUnavailableError } from '../../lib/errors.ts';
import { sha256Hex } from '../../lib/hash.ts';

export interface FetchRecord {
  url: string;
  status: number;
  fetched_at: string;
  content_sha256: string;
  byte_size: number;
  content_type: string | null;
  addresses: string[];
  remote_address: string | null;
  tls: {
    fingerprint256: string;
    subject: string | null;
    issuer: string | null;
    valid_from: string;
    valid_to: string;
    protocol: string | null;
  } | null;
}

export interface IrFetchOptions {
  userAgent: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** Extra trusted CA certificates (PEM), e.g. a test server's self-signed certificate. */
  ca?: string | Buffer;
}

/** GETs `url` and returns the body with its fetch record. 404 → NotFoundError; other failures → SourceUnavailableError. */
export async function fetchIrDocument(url: string, opts: IrFetchOptions): Promise<{ bytes: Buffer; record: FetchRecord }> {
  const u = new URL(url);
  const addresses = await lookup(u.hostname, { all: true })
    .then((xs) => xs.map((x) => x.address))
    .catch(() => [] as string[]);
  return new Promise((resolve, reject) => {
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.get(
      u,
      {
        headers: { 'user-agent': opts.userAgent, accept: 'application/pdf,text/html;q=0.9,*/*;q=0.8' },
        timeout: opts.timeoutMs ?? 30_000,
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        const sock = res.socket as TLSSocket;
        let tls: FetchRecord['tls'] = null;
        if (typeof sock.getPeerCertificate === 'function') {
          const c = sock.getPeerCertificate();
          tls = c?.fingerprint256
            ? {
                fingerprint256: c.fingerprint256,
                subject: c.subject?.CN ? String(c.subject.CN) : null,
                issuer: c.issuer?.CN ? String(c.issuer.CN) : null,
                valid_from: c.valid_from,
                valid_to: c.valid_to,
                protocol: sock.getProtocol?.() ?? null,
              }
            : null;
        }
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (ch: Buffer) => {
          size += ch.length;
          if (size > (opts.maxBytes ?? 64 * 1024 * 1024)) {
            req.destroy(new SourceUnavailableError(`response larger than the cap: ${url}`, { url, terminal: true }));
            return;
          }
          chunks.push(ch);
        });
        res.on('end', () => {
          if (status === 404) return reject(new NotFoundError(`not found: ${url}`, { url, status }));
          if (status >= 400) return reject(new SourceUnavailableError(`HTTP ${status} from ${url}`, { url, status }));
          const bytes = Buffer.concat(chunks);
          resolve({
            bytes,
            record: {
              url,
              status,
              fetched_at: new Date().toISOString(),
              content_sha256: sha256Hex(bytes),
              byte_size: bytes.length,
              content_type: (res.headers['content-type'] as string | undefined) ?? null,
              addresses,
              remote_address: sock.remoteAddress ?? null,
              tls,
            },
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new SourceUnavailableError(`timeout: ${url}`, { url })));
    req.on('error', (e) =>
      reject(
        e instanceof SourceUnavailableError
          ? e
          : new SourceUnavailableError(`request to ${url} failed: ${e.message}`, { url }, { cause: e }),
      ),
    );
  });
}

/** Fetches `url` into `<dir>/<name>` with its `.meta.json` sidecar; returns the path and the record. */
export async function saveIrDocument(
  url: string,
  dir: string,
  name: string,
  opts: IrFetchOptions,
): Promise<{ file: string; record: FetchRecord }> {
  const { bytes, record } = await fetchIrDocument(url, opts);
  const file = path.join(dir, name);
  await writeFetchedFile(file, bytes, { source_url: url, retrieved_at: record.fetched_at, fetch: record });
  return { file, record };
}
