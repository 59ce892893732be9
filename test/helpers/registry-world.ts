/**
 * The small-sample registry world several suites share: the deterministic sample of the registry, quotes and
 * transcripts domains (seed 42), ingested in process, and the app over the three snapshots.
 */
import path from 'node:path';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { transcriptsSampleGenerator } from '../../ingest/transcripts/transcripts.sample.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { buildTestService, ingestAll, type TestService } from './app.ts';
import { tempDir, testConfig } from './env.ts';

/** A temporary folder (`root`, remove it after) with the ingested small sample and the service over it. */
export async function buildRegistryWorld(prefix?: string): Promise<{ root: string; svc: TestService }> {
  const root = await tempDir(prefix);
  const input = path.join(root, 'input');
  await ensureSample(input, {
    scale: 'small',
    seed: 42,
    generators: [edgarSampleGenerator, quotesSampleGenerator, transcriptsSampleGenerator],
  });
  const config = testConfig(path.join(root, 'data'));
  await ingestAll(config, [registryPipeline, quotesPipeline, transcriptsPipeline], input);
  return { root, svc: await buildTestService(config, ['registry', 'quotes', 'transcripts']) };
}
