/**
 * `npm run bench -- workers`: the nightly ingest through BullMQ with 1, 2 and 4
 * worker processes (jobs/cli/worker.cli.ts, WORKER_CONCURRENCY=1: one job per
 * queue at a time each), each into a fresh DATA_DIR, including the fetch
 * stage: a local fake EDGAR (test/helpers/fake-edgar.ts) serves the sample's
 * own files and the registry run fetches BENCH_WORKERS_FETCH_CIKS companies'
 * submissions and companyfacts through the fetch step (SEC queue, Redis SEC
 * limiter at 10 requests/s, the SEC maximum), while the rest of the sample is
 * read locally. Records total time, jobs run (plan + fetch + parse/load +
 * publish) and jobs/s, time per domain and per stage, the fetch requests, the
 * workers' summed peak RSS and the load average at the start and end of every
 * run, into bench/results/workers.json.
 *
 * Scale (BENCH_WORKERS_SCALE): `full` (default) = the registry full-scale
 * sample (8,200 companies, ~84,000 files) in data/bench/registry/input/full,
 * shared with `npm run bench -- registry` (generated there if absent); the
 * other domains have no full sample here, so full scale runs the registry
 * only (BENCH_WORKERS_DOMAINS overrides). `medium`/`small` = every registered
 * pipeline over data/sample/<scale>. BENCH_WORKERS_COUNTS overrides the
 * process counts (e.g. "1,2"); BENCH_WORKERS_FETCH_CIKS=0 skips the fetch stage.
 *
 * The fetched companies' files are taken out of a hard-linked copy of the
 * sample (so the sample itself is never modified), and the fetch writes them
 * back with sidecars, exactly as a nightly run with EDGAR_FETCH_CIKS does.
 * Needs REDIS_URL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeQueues, enqueueRun, getQueue } from '../jobs/bullmq.ts';
import { jobIdFor } from '../jobs/pipeline.ts';
import { pipelines } from '../jobs/pipelines.ts';
import { ensureSample } from '../jobs/sample.ts';
import { edgarSampleGenerator } from '../ingest/edgar/edgar.sample.ts';
import { loadConfig } from '../lib/config.ts';
import { startFakeEdgar } from '../test/helpers/fake-edgar.ts';
import { writeResult } from './bench-kit.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) {
  console.error('bench workers needs REDIS_URL (a redis-server, e.g. redis-server --port 6390 --save "" --appendonly no)');
  process.exit(2);
}
const baseConfig = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const scale = (process.env.BENCH_WORKERS_SCALE ?? 'full') as 'small' | 'medium' | 'full';
const counts = (process.env.BENCH_WORKERS_COUNTS ?? '1,2,4').split(',').map(Number);
const fetchCount = Number(process.env.BENCH_WORKERS_FETCH_CIKS ?? 100);
const loadavg = () => os.loadavg().map((l) => Math.round(l * 10) / 10);

const t0 = Date.now();
let sourceDir: string;
let domains: string[];
if (scale === 'full') {
  sourceDir = path.join(ROOT, 'data', 'bench', 'registry', 'input', 'full');
  const s = await ensureSample(sourceDir, { scale: 'full', seed: 42, generators: [edgarSampleGenerator] });
  console.log(
    `registry full sample at ${sourceDir} (${s.generated ? `generated in ${((Date.now() - t0) / 1000).toFixed(0)} s` : 'present'})`,
  );
  domains = (process.env.BENCH_WORKERS_DOMAINS ?? 'registry').split(',');
} else {
  sourceDir = path.join(baseConfig.dataDir, 'sample', scale);
  const s = await ensureSample(sourceDir, { scale, seed: baseConfig.SAMPLE_SEED });
  console.log(`sample ${scale} at ${sourceDir} (${s.generated ? `generated in ${((Date.now() - t0) / 1000).toFixed(0)} s` : 'present'})`);
  domains = process.env.BENCH_WORKERS_DOMAINS?.split(',') ?? pipelines.map((p) => p.domain.domain);
}
const fetching = fetchCount > 0 && domains.includes('registry');
// The first N companies of the sample (by CIK) are fetched; the rest is read locally.
const fetchCiks = fetching
  ? (await readdir(path.join(sourceDir, 'sec', 'submissions')))
      .filter((f) => /^CIK\d{10}\.json$/.test(f))
      .sort()
      .slice(0, fetchCount)
      .map((f) => Number(f.slice(3, 13)))
  : [];
const edgar = fetching ? await startFakeEdgar(path.join(sourceDir, 'sec')) : null;

/** A hard-linked copy of the sample without the fetched companies' submissions and companyfacts. */
async function prepareRunInput(dir: string): Promise<string> {
  if (!fetching) return sourceDir;
  await rm(dir, { recursive: true, force: true });
  const cp = spawnSync('cp', ['-al', sourceDir, dir]);
  if (cp.status !== 0) throw new Error(`cp -al failed: ${cp.stderr}`);
  for (const cik of fetchCiks) {
    const name = `CIK${String(cik).padStart(10, '0')}.json`;
    for (const f of [
      path.join(dir, 'sec', 'submissions', name),
      path.join(dir, 'sec', 'companyfacts', name),
      path.join(dir, 'sec', 'companyfacts', `${name}.gz`),
    ])
      await rm(f, { force: true });
  }
  return dir;
}

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'jobs/cli/proofline.cli.ts'), 'worker', '--no-schedules', '--domains', domains.join(',')],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      if (/worker \d+ consuming/.test(out)) resolve(proc);
    });
    proc.on('exit', (c) => reject(new Error(`worker exited ${c}`)));
  });
}

/** Summed RSS (MB) of the worker processes, sampled from /proc (Linux). */
function rssMb(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
      if (m) total += Number(m[1]) / 1024;
    } catch {
      /* exited */
    }
  }
  return Math.round(total);
}

const runs = [];
for (const n of counts) {
  const dataDir = path.join(baseConfig.dataDir, 'bench', `workers-${n}`);
  await rm(dataDir, { recursive: true, force: true });
  const runInput = await prepareRunInput(path.join(baseConfig.dataDir, 'bench', 'workers-input'));
  const prefix = `bench-${process.pid}-${n}`;
  const env: Record<string, string> = {
    REDIS_URL,
    DATA_DIR: dataDir,
    QUEUE_PREFIX: prefix,
    WORKER_CONCURRENCY: '1',
    LOG_LEVEL: 'warn',
    INPUT_DIR: runInput,
  };
  if (edgar) {
    Object.assign(env, {
      SEC_USER_AGENT: 'Proofline Bench bench@proofline.example',
      SEC_WWW_BASE_URL: edgar.baseUrl,
      SEC_DATA_BASE_URL: edgar.baseUrl,
      SEC_RATE_LIMIT: '10',
      EDGAR_FETCH_CIKS: fetchCiks.join(','),
      EDGAR_FETCH_BATCH: '25',
    });
  }
  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'silent' });
  const procs = await Promise.all(Array.from({ length: n }, () => startWorker(env)));
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(procs.map((p) => p.pid!)))), 500);
  const hitsBefore = edgar?.hits.length ?? 0;
  const loadStart = loadavg();
  const started = Date.now();
  const enqueued = [];
  for (const d of domains) enqueued.push({ domain: d, ...(await enqueueRun(config, d, { inputDir: runInput, force: true })) });
  const perDomain: Record<
    string,
    { seconds: number; jobs: number; children: number; fetch_jobs: number; failed_children: number; stage_seconds: Record<string, number> }
  > = {};
  let jobs = 0;
  for (const { domain, runId } of enqueued) {
    const q = getQueue(config, domain);
    for (;;) {
      const plan = await q.getJob(jobIdFor(domain, 'plan', runId));
      if (plan && (await plan.getState()) === 'failed') throw new Error(`${domain} plan failed: ${plan.failedReason}`);
      const pub = await q.getJob(jobIdFor(domain, 'publish', runId));
      const state = pub ? await pub.getState() : null;
      if (state === 'failed') throw new Error(`${domain} publish failed: ${pub!.failedReason}`);
      if (state === 'completed') {
        const rv = pub!.returnvalue as { children: number; failed_children: unknown[] };
        // Jobs of the run and time by stage (summed job run times), to show where a run's time goes.
        const stage_seconds: Record<string, number> = {};
        let count = 0;
        let fetchJobs = 0;
        for (const qq of [q, getQueue(config, 'sec')]) {
          for (const j of await qq.getJobs(['completed'], 0, 100_000)) {
            if (!j.id?.includes(runId) || !j.processedOn || !j.finishedOn) continue;
            count++;
            const stage = j.name.split(':')[1]!;
            if (stage === 'fetch') fetchJobs++;
            stage_seconds[stage] = Math.round(((stage_seconds[stage] ?? 0) + (j.finishedOn - j.processedOn) / 1000) * 10) / 10;
          }
        }
        perDomain[domain] = {
          seconds: (pub!.finishedOn! - plan!.timestamp) / 1000,
          jobs: count,
          children: rv.children,
          fetch_jobs: fetchJobs,
          failed_children: rv.failed_children.length,
          stage_seconds,
        };
        jobs += count;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const loadEnd = loadavg();
  const hits = edgar ? edgar.hits.slice(hitsBefore) : [];
  await Promise.all(
    procs.map(
      (p) =>
        new Promise((r) => {
          p.on('exit', r);
          p.kill('SIGTERM');
        }),
    ),
  );
  for (const d of [...domains, 'sec'])
    await getQueue(config, d)
      .obliterate({ force: true })
      .catch(() => undefined);
  await closeQueues();
  const run = {
    workers: n,
    seconds: Math.round(seconds * 10) / 10,
    jobs,
    jobs_per_second: Math.round((jobs / seconds) * 100) / 100,
    fetch: edgar
      ? {
          requests: hits.length,
          failed_requests: hits.filter((h) => h.status !== 200 && h.status !== 404).length,
          span_seconds: hits.length ? Math.round((Math.max(...hits.map((h) => h.at)) - Math.min(...hits.map((h) => h.at))) / 100) / 10 : 0,
        }
      : null,
    per_domain: perDomain,
    workers_peak_rss_mb: peak,
    load_average_start: loadStart,
    load_average_end: loadEnd,
  };
  console.log(JSON.stringify(run));
  runs.push(run);
  await rm(dataDir, { recursive: true, force: true });
}
if (fetching) await rm(path.join(baseConfig.dataDir, 'bench', 'workers-input'), { recursive: true, force: true });
await edgar?.close();

const base = runs.find((r) => r.workers === 1);
writeResult('workers', {
  scale,
  sample_dir: path.relative(ROOT, sourceDir),
  domains,
  worker_concurrency: 1,
  fetch_stage: fetching
    ? {
        companies: fetchCiks.length,
        files_per_company: 2,
        ciks_per_fetch_job: 25,
        sec_rate_limit_per_s: 10,
        server: 'local fake EDGAR replaying the sample (test/helpers/fake-edgar.ts)',
      }
    : null,
  load_average_at_end: loadavg(),
  runs: runs.map((r) => ({ ...r, speedup_vs_1: base ? Math.round((base.seconds / r.seconds) * 100) / 100 : null })),
});
process.exit(0);
