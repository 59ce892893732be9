/**
 * Builds the service in process over a temporary data directory: ingests the
 * given inputs with the in-process runner, opens readers, returns `app` plus a
 * cleanup. Suites share one build per file (beforeAll) to keep CI fast.
 */
import type { H3 } from 'h3';
import { silentLogger } from '../../lib/log.ts';
import type { Config } from '../../lib/config.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import type { Pipeline } from '../../jobs/pipeline.ts';
import { createApp } from '../../service/app.ts';
import type { ServiceDeps } from '../../service/platform/deps.ts';

export interface TestService {
  app: H3;
  deps: ServiceDeps;
  config: Config;
  close(): Promise<void>;
}

/** Runs `pipelines` in process over `inputDir` into `config.dataDir`. */
export async function ingestAll(config: Config, pipelines: Pipeline[], inputDir: string): Promise<void> {
  for (const p of pipelines) await runPipelineInProcess(p, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
}

/** Opens readers for `domains` and builds the app; `extra` overrides deps fields. */
export async function buildTestService(config: Config, domains: string[], extra: Partial<ServiceDeps> = {}): Promise<TestService> {
  const readers: ServiceDeps['readers'] = {};
  for (const d of domains) readers[d] = await SnapshotReader.open(config.dataDir, d, { poolSize: 2 });
  const deps: ServiceDeps = {
    readers,
    log: silentLogger,
    now: () => new Date(),
    startedAt: new Date(),
    options: { publicBaseUrl: 'http://proofline.test', snapshotStaleHours: 48, version: '0.0.0-test', dataDir: config.dataDir },
    ...extra,
  };
  const app = createApp(deps);
  return {
    app,
    deps,
    config,
    async close() {
      // The usage service the app created (createApp makes one lazily, with a query log whose timer writes spool
      // files under DATA_DIR/state) is closed first, so nothing writes into the data directory once the suite
      // removes it; a usage service the test passed in is the test's to close.
      if (!extra.usage) await deps.usage?.close();
      for (const r of Object.values(readers)) await r.close();
    },
  };
}

/** GET helper returning status and parsed JSON. */
export async function getJson(app: H3, path: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await app.fetch(new Request(`http://proofline.test${path}`, init));
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

/**
 * Waits until the clock is past `ms` (by default the current millisecond). A ranking counts the rows logged before
 * the millisecond it is asked in (/api/ir/rankings' window is [now - days, now)), so a test that logs requests and
 * ranks them at once waits for the next millisecond in between.
 */
export async function clockPast(ms: number = Date.now()): Promise<void> {
  while (Date.now() <= ms) await new Promise((r) => setTimeout(r, 1));
}
