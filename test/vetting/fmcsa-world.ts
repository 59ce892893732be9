/**
 * A small FMCSA warehouse for vetting, care and MCP suites: the real fmcsa
 * pipeline over the deterministic sample, cut to a few thousand carriers so
 * a suite builds it in seconds. Each suite gets its own data directory.
 */
import path from 'node:path';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { generateFmcsaSample } from '../../ingest/fmcsa/fmcsa.sample.ts';
import type { Config } from '../../lib/config.ts';
import type { SampleGenerator } from '../../ingest/sample/sample-kit.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import type { ServiceDeps } from '../../service/platform/deps.ts';
import type { StateBackend } from '../helpers/state-backends.ts';
import { buildTestService, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

export const WORLD_CARRIERS = 1500;

const smallFmcsa = (carriers: number): SampleGenerator => ({ name: 'fmcsa', generate: (o) => generateFmcsaSample({ ...o, carriers }) });

export interface World {
  root: string;
  config: Config;
  svc: TestService;
  state: StateStore;
  close(): Promise<void>;
}

/** Generates the small fmcsa sample (`carriers` of them) under `root/input` and publishes it with the real pipeline into `dataDir`. */
export async function ingestSmallFmcsa(
  root: string,
  dataDir: string,
  env: Record<string, string> = {},
  carriers = WORLD_CARRIERS,
): Promise<Config> {
  const inputDir = path.join(root, 'input');
  await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [smallFmcsa(carriers)] });
  const config = testConfig(dataDir, env);
  await ingestAll(config, [fmcsaPipeline], inputDir);
  return config;
}

/** Ingests the small fmcsa sample with the real pipeline and builds the service with a state store (embedded, or `backend`'s). */
export async function buildWorld(
  env: Record<string, string> = {},
  extra: Partial<ServiceDeps> = {},
  backend?: StateBackend,
): Promise<World> {
  const root = await tempDir('proofline-vet-');
  const config = await ingestSmallFmcsa(root, path.join(root, 'data'), env);
  // The embedded store in the world's DATA_DIR, or a fresh store of the given backend (helpers/state-backends.ts).
  const opened = backend ? await backend.open() : null;
  const state = opened?.store ?? (await StateStore.open(stateDbPath(config.dataDir)));
  const svc = await buildTestService(config, ['fmcsa'], { state, ...extra });
  return {
    root,
    config,
    svc,
    state,
    async close() {
      await svc.close();
      await (svc.deps.state ?? state).close().catch(() => undefined);
      await opened?.dispose();
      await removeDir(root);
    },
  };
}
