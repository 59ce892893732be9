/**
 * `node --import tsx jobs/registry/edgar-fetch.cli.ts --cik 320193 [--cik N ...] [--tickers] [--out DIR]`
 *
 * Fetch mode of the registry pipeline: downloads per-CIK submissions and
 * companyfacts (with `.meta.json` sidecars) into `DIR/sec/…` (default
 * INPUT_DIR), through the shared SEC limiter. Needs SEC_USER_AGENT. Then
 * `npm run ingest -- registry --input DIR` ingests them.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { EdgarClient, fetchEdgarInputs } from './edgar-client.ts';

const { values } = parseArgs({ options: { cik: { type: 'string', multiple: true, default: [] }, out: { type: 'string' }, tickers: { type: 'boolean', default: false } } });
const config = loadConfig(process.env);
try {
  const client = EdgarClient.fromConfig(config);
  const report = await fetchEdgarInputs(client, { inputDir: values.out ?? config.inputDir, ciks: values.cik.map(Number), tickers: values.tickers });
  console.log(JSON.stringify({ written: report.written.length, missing: report.missing, failed: report.failed }, null, 2));
  process.exitCode = report.failed.length ? 1 : 0;
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 2;
} finally {
  await closeSecLimiter();
}
