/**
 * `npm run bench -- workers`: the nightly ingest of every registered pipeline
 * through BullMQ with 1, 2 and 4 worker processes (jobs/worker.cli.ts, one job
 * at a time each, so N processes = N parallel jobs) over the same sample, each
 * into a fresh DATA_DIR. Records total time, jobs run (plan + children +
 * publish) and jobs/s, per domain time and the children per domain, into
 * bench/results/workers.json.
 *
 * Needs REDIS_URL. Sample: BENCH_WORKERS_SCALE (default: full when
 * data/sample/full is complete, else medium; generated if absent).
 * BENCH_WORKERS_COUNTS overrides the counts (e.g. "1,2").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeQueues, enqueueRun, getQueue } from '../jobs/bullmq.ts';
import { jobIdFor } from '../jobs/pipeline.ts';
import { pipelines } from '../jobs/pipelines.ts';
import { ensureSample } from '../jobs/sample.ts';
import { loadConfig } from '../lib/config.ts';
import { writeResult } from './bench-kit.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) {
  console.error('bench workers needs REDIS_URL (a redis-server, e.g. redis-server --port 6390 --save "" --appendonly no)');
  process.exit(2);
}
const baseConfig = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const scale = (process.env.BENCH_WORKERS_SCALE ?? (existsSync(path.join(baseConfig.dataDir, 'sample', 'full', '.complete')) ? 'full' : 'medium')) as 'small' | 'medium' | 'full';
const counts = (process.env.BENCH_WORKERS_COUNTS ?? '1,2,4').split(',').map(Number);
const inputDir = path.join(baseConfig.dataDir, 'sample', scale);
const t0 = Date.now();
const sample = await ensureSample(inputDir, { scale, seed: baseConfig.SAMPLE_SEED });
console.log(`sample ${scale} at ${inputDir} (${sample.generated ? `generated in ${((Date.now() - t0) / 1000).toFixed(0)} s` : 'present'})`);

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'jobs/worker.cli.ts'), '--no-schedules'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const m = status.match(/VmRSS:\s+(\d+)/);
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
  const prefix = `bench-${process.pid}-${n}`;
  const env = { REDIS_URL, DATA_DIR: dataDir, QUEUE_PREFIX: prefix, WORKER_CONCURRENCY: '1', LOG_LEVEL: 'warn', INPUT_DIR: inputDir };
  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'silent' });
  const procs = await Promise.all(Array.from({ length: n }, () => startWorker(env)));
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(procs.map((p) => p.pid!)))), 500);
  const started = Date.now();
  const domains = [];
  for (const p of pipelines) {
    const d = p.domain.domain;
    const { runId } = await enqueueRun(config, d, { inputDir, force: true });
    domains.push({ domain: d, runId });
  }
  const perDomain: Record<string, { seconds: number; children: number; failed_children: number; stage_seconds: Record<string, number> }> = {};
  let jobs = 0;
  for (const { domain, runId } of domains) {
    const q = getQueue(config, domain);
    for (;;) {
      const plan = await q.getJob(jobIdFor(domain, 'plan', runId));
      if (plan && (await plan.getState()) === 'failed') throw new Error(`${domain} plan failed: ${plan.failedReason}`);
      const pub = await q.getJob(jobIdFor(domain, 'publish', runId));
      const state = pub ? await pub.getState() : null;
      if (state === 'failed') throw new Error(`${domain} publish failed: ${pub!.failedReason}`);
      if (state === 'completed') {
        const rv = pub!.returnvalue as { children: number; failed_children: unknown[] };
        // Time by stage (summed job run times), to show where a run's time goes.
        const stage_seconds: Record<string, number> = {};
        for (const qq of [q, getQueue(config, 'sec')]) {
          for (const j of await qq.getJobs(['completed'], 0, 10_000)) {
            if (!j.id?.includes(runId) || !j.processedOn || !j.finishedOn) continue;
            const stage = j.name.split(':')[1]!;
            stage_seconds[stage] = Math.round(((stage_seconds[stage] ?? 0) + (j.finishedOn - j.processedOn) / 1000) * 10) / 10;
          }
        }
        perDomain[domain] = { seconds: (pub!.finishedOn! - plan!.timestamp) / 1000, children: rv.children, failed_children: rv.failed_children.length, stage_seconds };
        jobs += rv.children + 2;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  await Promise.all(procs.map((p) => new Promise((r) => { p.on('exit', r); p.kill('SIGTERM'); })));
  await closeQueues();
  const run = { workers: n, seconds: Math.round(seconds * 10) / 10, jobs, jobs_per_second: Math.round((jobs / seconds) * 100) / 100, per_domain: perDomain, workers_peak_rss_mb: peak };
  console.log(JSON.stringify(run));
  runs.push(run);
  await rm(dataDir, { recursive: true, force: true });
}

const base = runs.find((r) => r.workers === 1);
writeResult('workers', {
  scale,
  sample_dir: path.relative(ROOT, inputDir),
  domains: pipelines.map((p) => p.domain.domain),
  worker_concurrency: 1,
  load_average_at_end: os.loadavg().map((l) => Math.round(l * 10) / 10),
  runs: runs.map((r) => ({ ...r, speedup_vs_1: base ? Math.round((base.seconds / r.seconds) * 100) / 100 : null })),
});
process.exit(0);
