/**
 * Process warm-up (service/platform/warmup.ts, service/warmup/): before it
 * listens, the server answers every GET route and read-only MCP tool once in
 * process with real keys from the snapshots, so a new process answers its
 * first client requests warm (issue 22: cold p99). The warm-up must leave no
 * trace: no metering, no query log, no cached answer, no stored receipt; and
 * its unmetered pass cannot be claimed by a client.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServiceDeps } from '../../service/platform/deps.ts';
import { listRoutes } from '../../service/platform/route-registry.ts';
import type { UsageService } from '../../service/platform/usage.service.ts';
import { collectStartupGarbage, warmUpApp } from '../../service/platform/warmup.ts';
import { loadWarmupKeys, planWarmupRequests, warmEachSnapshotBeforeSwap } from '../../service/warmup/warmup.queries.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { buildRegistryWorld } from '../helpers/registry-world.ts';

let root: string;
let svc: TestService;
beforeAll(async () => {
  ({ root, svc } = await buildRegistryWorld('proofline-warmup-'));
}, 300_000);
afterAll(async () => {
  await svc?.close();
  if (root) await removeDir(root);
});

/** The usage service the API layer created on the first metered request. */
async function usageOf(deps: ServiceDeps): Promise<UsageService> {
  await getJson(svc.app, '/api/company/NOPE');
  expect(deps.usage).toBeDefined();
  return deps.usage!;
}

describe('process warm-up', () => {
  it('draws real keys from the served snapshots (FMCSA is not served here)', async () => {
    const keys = await loadWarmupKeys(svc.deps.readers);
    expect(keys.ticker).toMatch(/^[A-Z.-]+$/);
    expect(keys.leaf_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(keys.person).toBeTruthy();
    expect(keys.quote_ticker).toMatch(/^[A-Z.-]+$/);
    expect(keys.transcript_ticker).toMatch(/^[A-Z.-]+$/);
    expect(keys.dot).toBeUndefined();
  });

  it('plans every GET route whose keys it has, every read-only tool, and nothing with side effects', async () => {
    const plan = planWarmupRequests(await loadWarmupKeys(svc.deps.readers));
    const paths = plan.filter((p) => p.body === undefined).map((p) => p.path.split('?')[0]!);
    for (const r of listRoutes().filter((x) => x.method === 'GET' && x.path.startsWith('/api/company/{ticker}')))
      expect(paths.some((p) => p.startsWith('/api/company/') && p.split('/').length === r.path.split('/').length)).toBe(true);
    expect(paths).toContain('/openapi.json');
    expect(paths.some((p) => p.startsWith('/api/verify/') || p.startsWith('/admin/') || p.startsWith('/api/care/'))).toBe(false);
    // The monitoring reads are warmed as one fixed broker (reads only: their state-store SQL is prepared).
    for (const route of [
      '/api/watchlist',
      '/api/monitoring/events',
      '/api/monitoring/settings',
      '/api/webhooks',
      '/api/webhooks/deliveries',
    ])
      expect(plan.map((p) => p.path)).toContain(`${route}?broker_id=_proofline_warmup_`);
    const tools = plan.filter((p) => p.body !== undefined).map((p) => JSON.parse(p.body!).params.name as string);
    expect(tools).toContain('sec_company');
    expect(tools).not.toContain('sec_verify');
    expect(tools).not.toContain('freight_carrier_vet');
  });

  it('answers the plan in process, unmetered, unlogged and uncached, and stores no receipt', async () => {
    const usage = await usageOf(svc.deps);
    const meter = vi.spyOn(usage, 'meter');
    const record = vi.spyOn(usage, 'record');
    const plan = planWarmupRequests(await loadWarmupKeys(svc.deps.readers));
    svc.deps.responseCache?.clear();
    const report = await warmUpApp(svc.app, plan, { budgetMs: 120_000, passes: 2, concurrency: 2 });
    expect(report.cut_short).toBe(false);
    expect(report.requests).toBe(plan.length * 2);
    // Registry, quotes and transcripts routes answer; FMCSA ones are 503 here (domain not served), never 500.
    expect(report.statuses['500'] ?? 0).toBe(0);
    expect(report.statuses.error ?? 0).toBe(0);
    expect(report.statuses['200']).toBeGreaterThan(plan.length);
    expect(meter).not.toHaveBeenCalled();
    expect(record).not.toHaveBeenCalled();
    expect(svc.deps.responseCache?.size).toBe(0);
    expect(existsSync(path.join(svc.config.dataDir, 'state', 'receipts.jsonl'))).toBe(false);

    // A client's request for the same URL is metered, logged and cached as ever.
    const card = plan.find((p) => p.body === undefined && /^\/api\/company\/[^/?]+$/.test(p.path))!;
    const r = await getJson(svc.app, card.path);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-proofline-cache')).toBe('miss');
    expect(record).toHaveBeenCalledTimes(1);
    expect(meter).toHaveBeenCalledTimes(1);
    meter.mockRestore();
    record.mockRestore();
  });

  it('warms a newly published snapshot before it is swapped in, with it staged for the warm-up alone', async () => {
    const usage = await usageOf(svc.deps);
    const meter = vi.spyOn(usage, 'meter');
    const reader = svc.deps.readers.transcripts!;
    const before = reader.manifest!.snapshot_id;
    const seen: Array<{ staged: string; snapshot_id: string; statuses: Record<string, number>; requests: number }> = [];
    // A client request waiting for the warm-up's end: it reads outside the warm-up's scope, before the swap.
    let warmedUp!: () => void;
    const warmed = new Promise<void>((resolve) => (warmedUp = resolve));
    const client = (async () => {
      await warmed;
      return reader.manifest!.snapshot_id;
    })();
    const log = {
      debug: (() => undefined) as never,
      info: ((o: object, msg: string) => {
        if (!msg.startsWith('warm-up done (new snapshot')) return;
        seen.push({ ...(o as (typeof seen)[number]), staged: reader.manifest!.snapshot_id });
        warmedUp();
      }) as never,
    };
    const stop = warmEachSnapshotBeforeSwap(svc.app, svc.deps.readers, { budgetMs: 120_000, concurrency: 2, log });
    try {
      await ingestAll(svc.config, [transcriptsPipeline], path.join(root, 'input'));
      expect(reader.manifest!.snapshot_id).toBe(before); // published, not yet swapped (tests poll by hand)
      expect(await reader.refresh()).toBe(true);
      const after = reader.manifest!.snapshot_id;
      expect(after).not.toBe(before);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ domain: 'transcripts', snapshot_id: after, staged: after });
      expect(await client).toBe(before);
      expect(seen[0]!.requests).toBeGreaterThan(0);
      expect(seen[0]!.statuses['500'] ?? 0).toBe(0);
      expect(seen[0]!.statuses['200']).toBeGreaterThan(0);
      expect(meter).not.toHaveBeenCalled();
    } finally {
      stop();
      meter.mockRestore();
    }
  }, 120_000);

  it("collects what start-up left unreachable before listening (a full collection, not V8's own timing)", async () => {
    let ref: WeakRef<object> | undefined;
    (() => {
      ref = new WeakRef({ left: new Array(100_000).fill(1) });
    })();
    await new Promise((r) => setImmediate(r)); // a WeakRef keeps its target until the job that made it ends
    expect(collectStartupGarbage()).toEqual(expect.any(Number));
    expect(ref!.deref()).toBeUndefined();
  });
  it('stops at its budget', async () => {
    const plan = planWarmupRequests(await loadWarmupKeys(svc.deps.readers));
    const report = await warmUpApp(svc.app, plan, { budgetMs: 0 });
    expect(report).toMatchObject({ requests: 0, cut_short: true });
  });
});
