/**
 * Several API processes on one DATA_DIR: DuckDB lets one process hold the
 * state store read-write, so the first server owns it and a second one serves
 * every read endpoint, answers the state-backed ones with a 503 naming the
 * owner, reports it on /api/health, and takes the store over once the owner
 * has stopped (with everything the owner acknowledged).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/env.ts';
import { exited, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { claimStateStore, describeLockHolder, isLockConflict } from '../../service/platform/state.claim.ts';
import { stateDbPath } from '../../service/platform/state.store.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('describeLockHolder', () => {
  it("names the PID and program from DuckDB's lock-conflict message", () => {
    const e = new Error(
      'IO Error: Could not set lock on file "/d/state/proofline-state.duckdb": Conflicting lock is held in /usr/bin/node (PID 4996). See also https://duckdb.org/docs/stable/connect/concurrency',
    );
    expect(isLockConflict(e)).toBe(true);
    expect(describeLockHolder(e)).toBe('PID 4996 (/usr/bin/node)');
    expect(describeLockHolder(new Error('IO Error: Could not set lock on file "x"'))).toBe('another process');
    expect(isLockConflict(new Error('Catalog Error: Table with name x does not exist'))).toBe(false);
  });
});

describe('claimStateStore', () => {
  it('throws what is not a lock conflict (the store path is a directory), instead of serving without a store', async () => {
    const dir = await tempDir();
    const file = stateDbPath(dir);
    await mkdir(file, { recursive: true });
    await expect(claimStateStore(file, { retryMs: 100 })).rejects.toThrow();
    await removeDir(dir);
  });
});

describe('two API processes on one DATA_DIR', () => {
  let dir: string;
  let owner: ServerProcess | null = null;
  let second: ServerProcess | null = null;
  let dots: number[] = [];
  beforeAll(async () => {
    dir = await tempDir('proofline-two-servers-');
    await ingestSmallFmcsa(path.join(dir, 'src'), dir);
    const r = await SnapshotReader.open(dir, 'fmcsa', { poolSize: 1 });
    dots = (await r.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 3')).map((x) => Number(x.dot_number));
    await r.close();
  }, 120_000);
  afterAll(async () => {
    owner?.proc.kill('SIGKILL');
    second?.proc.kill('SIGKILL');
    await removeDir(dir);
  });

  it('serves reads on both, state writes on the owner only, and hands the store over when the owner stops', async () => {
    owner = await startServerProcess(dir);
    second = await startServerProcess(dir, { STATE_CLAIM_RETRY_MS: '200' });
    const heldBy = `PID ${owner.proc.pid}`;

    // This very process cannot take the store either: the claim reports the owner and retries quietly.
    const claim = await claimStateStore(stateDbPath(dir), { retryMs: 60_000 });
    expect(claim.store).toBeNull();
    expect(claim.heldBy).toContain(heldBy);
    await claim.close();

    // Reads: both processes answer from the warehouse.
    for (const s of [owner, second]) {
      const r = await fetch(`${s.url}/api/carrier/${dots[0]}`);
      expect(r.status).toBe(200);
    }
    // The owner vets; the second process answers 503 naming the owner, with Retry-After.
    const vet = await fetch(`${owner.url}/api/vet`, post({ dot_number: dots[0], broker_id: 'two-servers' }));
    expect(vet.status).toBe(200);
    const { vetting_id } = (await vet.json()) as { vetting_id: string };
    const refused = await fetch(`${second.url}/api/vet`, post({ dot_number: dots[1], broker_id: 'two-servers' }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    const body = (await refused.json()) as { error: string; held_by: string };
    expect(body.error).toMatch(/owned by another Proofline process on this DATA_DIR/);
    expect(body.held_by).toContain(heldBy);
    expect(
      (
        await fetch(
          `${second.url}/api/care`,
          post({
            shipment: { ref: 'BOL-1', commodity: 'steel coils', value_usd: 50000 },
            parties: { broker: 'acme', carrier: 'carrier-x' },
          }),
        )
      ).status,
    ).toBe(503);
    const health = (await (await fetch(`${second.url}/api/health`)).json()) as {
      status: string;
      dependencies: Record<string, string>;
      reasons: string[];
    };
    expect(health.dependencies.state).toBe('down');
    expect(health.status).toBe('degraded');
    expect(health.reasons.join('\n')).toContain(heldBy);
    const ownerHealth = (await (await fetch(`${owner.url}/api/health`)).json()) as { dependencies: Record<string, string> };
    expect(ownerHealth.dependencies.state).toBe('up');

    // The owner stops: the second process takes the store over, with the owner's acknowledged record.
    owner.proc.kill('SIGTERM');
    await exited(owner.proc);
    owner = null;
    const deadline = Date.now() + 15_000;
    let state: string | undefined = 'down';
    while (state === 'down' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      state = ((await (await fetch(`${second.url}/api/health`)).json()) as { dependencies: Record<string, string> }).dependencies.state;
    }
    expect(state).toBe('up');
    const kept = await fetch(`${second.url}/api/vetting?id=${vetting_id}`);
    expect(kept.status).toBe(200);
    expect(((await kept.json()) as { vetting_id: string }).vetting_id).toBe(vetting_id);
    expect((await fetch(`${second.url}/api/vet`, post({ dot_number: dots[1], broker_id: 'two-servers' }))).status).toBe(200);
    second.proc.kill('SIGTERM');
    await exited(second.proc);
    second = null;
  }, 180_000);
});
