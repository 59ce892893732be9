/**
 * The error tree (lib/errors.ts): every class carries its HTTP status,
 * JSON-RPC code and job outcome, and each transport maps through them alone.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiscoveryFetchError } from '../../lib/discovery/fetch.ts';
import {
  ConfigError,
  ConflictError,
  httpStatusFor,
  InvalidApiKeyError,
  InvalidInputError,
  isTerminal,
  NotFoundError,
  ParseError,
  PaymentRequiredError,
  publicMessage,
  rpcCodeFor,
  SourceUnavailableError,
  StageOrderError,
} from '../../lib/errors.ts';
import { currentPointerPath } from '../../lib/warehouse/layout.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readerFor, type ServiceDeps } from '../../service/platform/deps.ts';
import { errorResponse } from '../../service/platform/http.ts';
import { toolErrorOf } from '../../service/mcp/mcp.routes.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

describe('the error tree', () => {
  const table: Array<[Error, number, number, boolean]> = [
    [new SourceUnavailableError('down'), 503, -32603, false],
    [new ParseError('bad bytes'), 422, -32603, true],
    [new NotFoundError('nope'), 404, -32602, true],
    [new InvalidInputError('bad'), 400, -32602, true],
    [new InvalidApiKeyError('revoked'), 401, -32001, true],
    [new PaymentRequiredError('broke'), 402, -32002, true],
    [new ConflictError('taken'), 409, -32003, true],
    [new StageOrderError('out of order'), 409, -32003, true],
    [new ConfigError(['PORT: bad']), 500, -32603, true],
    [new DiscoveryFetchError('blocked-target', 'private', 'http://10.0.0.1/'), 400, -32602, true],
    [new DiscoveryFetchError('timeout', 'slow', 'https://example.com/'), 503, -32603, false],
    [new Error('boom'), 500, -32603, false],
  ];

  it.each(table)('%s maps to HTTP %i, JSON-RPC %i, terminal %s', (err, http, rpc, terminal) => {
    expect(httpStatusFor(err)).toBe(http);
    expect(rpcCodeFor(err)).toBe(rpc);
    expect(isTerminal(err)).toBe(terminal);
  });

  it('answers HTTP with the status of the class and the details of its context', async () => {
    const res = errorResponse(new PaymentRequiredError('insufficient credits', { response: { balance: 0, needed: 1 } }));
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ error: 'insufficient credits', status: 402, balance: 0, needed: 1 });
    const conflict = errorResponse(new StageOrderError('stage DELIVERED is not allowed here'));
    expect(conflict.status).toBe(409);
  });

  it('answers MCP with a tool error carrying the same details, and hides unexpected errors', () => {
    expect(toolErrorOf('freight_carrier_vet', new PaymentRequiredError('insufficient credits', { response: { balance: 0 } }))).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'freight_carrier_vet failed: insufficient credits {"balance":0}' }],
    });
    expect(toolErrorOf('x', new Error('secret path /etc'))).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'x failed: internal error' }],
    });
    expect(publicMessage(new Error('secret'))).toBe('internal error');
  });
});

describe('the snapshot reader', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map(removeDir)));

  it('is a 503 for a domain this instance does not serve', () => {
    const deps = { readers: {} } as unknown as ServiceDeps;
    expect(() => readerFor(deps, 'fmcsa')).toThrow(SourceUnavailableError);
  });

  it('reports a failed background refresh to its logger instead of swallowing it', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const warnings: unknown[] = [];
    const reader = await SnapshotReader.open(dir, 'demo', { pollMs: 20, log: { warn: (obj: unknown) => void warnings.push(obj) } });
    // A pointer naming a snapshot whose manifest is missing: the refresh fails on every poll.
    await mkdir(path.dirname(currentPointerPath(dir, 'demo')), { recursive: true });
    await writeFile(
      currentPointerPath(dir, 'demo'),
      JSON.stringify({ snapshot_id: 'missing', run_id: 'r', published_at: '2026-01-01T00:00:00Z' }),
    );
    await expect.poll(() => warnings.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(warnings[0]).toMatchObject({ domain: 'demo' });
    await reader.close();
  });
});
