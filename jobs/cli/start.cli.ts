/**
 * `npm start` (= `proofline start`): the embedded mode on a fresh clone. Generates the sample data
 * if absent (or uses INPUT_DIR), runs every domain pipeline in process with
 * progress output (a domain whose inputs are unchanged is skipped, so a re-run
 * is fast), then serves the API and prints its URL and example requests.
 */
import type { Config } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import { startServer } from '../../service/main.ts';
import { attachMonitoring } from './monitoring-attach.ts';
import { runPipelineInProcess } from '../in-process.ts';
import { pipelines } from '../pipelines.ts';
import { createProgressPrinter } from '../progress.ts';
import { ensureSample } from '../sample.ts';
import { loadCliConfig } from './cli-kit.ts';

/** Runs until SIGTERM/SIGINT, which drain the server and exit 0; never resolves. */
export async function runStart(): Promise<number> {
  const config: Config = loadCliConfig();
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  if (config.usesSample) {
    const t0 = Date.now();
    const r = await ensureSample(config.inputDir, { scale: config.SAMPLE_SCALE, seed: config.SAMPLE_SEED });
    console.log(
      r.generated
        ? `Generated ${config.SAMPLE_SCALE} sample (seed ${config.SAMPLE_SEED}): ${r.files} files, ${(r.bytes / 1e6).toFixed(1)} MB in ${((Date.now() - t0) / 1000).toFixed(1)} s → ${r.dir}`
        : `Using existing ${config.SAMPLE_SCALE} sample in ${r.dir}`,
    );
  } else {
    console.log(`Using inputs in ${config.inputDir}`);
  }
  const progress = createProgressPrinter();
  for (const p of pipelines) {
    // `npm start` never touches the network: local (or generated) inputs only, even with EDGAR_FETCH_* set.
    const report = await runPipelineInProcess(p, { config, log, fetch: false, onProgress: progress });
    if (report.skipped) console.log(`[${report.domain}] inputs unchanged: serving the current snapshot`);
    else
      console.log(
        `[${report.domain}] published ${report.snapshot_id}: ${report.rows} rows, ${report.rejects} rejected, ${(report.duration_ms / 1000).toFixed(1)} s`,
      );
    for (const c of report.children.filter((c) => c.status === 'failed')) console.log(`[${report.domain}]   rejected ${c.key}: ${c.error}`);
  }
  // Monitoring (docs/monitoring.md): change detection and webhook deliveries run in the process owning the state store.
  const server = await startServer(config, log, attachMonitoring);
  const u = server.url;
  console.log(
    `\nProofline API listening on ${u}\n\nTry:\n  curl ${u}/api/health\n  curl ${u}/api/company/AAPL\n  curl ${u}/api/company/320193\n`,
  );
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return new Promise<number>(() => undefined);
}
