/**
 * The three processors every domain shares, as plain exported functions. Both
 * runners (in-process and BullMQ) call exactly these; tests call them directly.
 */
import path from 'node:path';
import { readdir, readFile, rm } from 'node:fs/promises';
import type { Config } from '../lib/config.ts';
import { InvalidInputError } from '../lib/errors.ts';
import { hashCanonical } from '../lib/hash.ts';
import type { Logger } from '../lib/log.ts';
import {
  completeLedger,
  IncrementalPlanner,
  LEDGER_FILE,
  linkReusedParts,
  readInputParts,
  readLedger,
  STATE_FILE,
  type IncrementalState,
} from '../lib/warehouse/incremental.ts';
import { publishRun, type PublishResult } from '../lib/warehouse/publish.ts';
import { snapshotDir } from '../lib/warehouse/layout.ts';
import { pruneStaging, readCurrentManifest } from '../lib/warehouse/snapshot.ts';
import { stagingDir } from '../lib/warehouse/layout.ts';
import { StagingRun } from '../lib/warehouse/staging.ts';
import type { FetchJob, FetchPlan, Pipeline, Plan, StepResult } from './pipeline.ts';

export interface ChildOutcome {
  step: string;
  key: string;
  status: 'completed' | 'failed';
  rows: number;
  rejects: number;
  error?: string;
  error_kind?: string;
  detail?: Record<string, unknown>;
}

export interface RunReport {
  domain: string;
  run_id: string;
  skipped: boolean;
  snapshot_id: string | null;
  rows: number;
  rejects: number;
  failed_children: number;
  children: ChildOutcome[];
  plan_rejects: Array<{ file: string; reason: string }>;
  /** Inputs parsed, reused from the current snapshot, and removed since it (incremental pipelines). */
  incremental?: { parsed: number; reused: number; removed: number };
  duration_ms: number;
}

function stagingOptions(config: Config) {
  return { memoryLimit: config.DUCKDB_MEMORY_LIMIT, threads: 1 };
}

/**
 * Plan stage: plans the fetch jobs (when the pipeline has a `fetch` hook, a remote source is
 * configured and `fetch` is not false), then lists the inputs; returns null when the inputs equal
 * those of the current snapshot (unless forced). A run with fetch jobs is never skipped: its
 * inputs are known only once fetched, so its digest also covers the run id.
 */
export async function processPlan(
  pipeline: Pipeline,
  ctx: { config: Config; runId: string; inputDir: string; log: Logger; force?: boolean; fetch?: boolean; full?: boolean },
): Promise<Plan | null> {
  const { plan, skipped } = await planRun(pipeline, ctx);
  return skipped ? null : plan;
}

/**
 * `processPlan` with the plan of a skipped run too: its `rejects` (files found unusable while planning, e.g. an
 * EDGAR daily index that is an HTML page) are reported even when nothing is published.
 */
export async function planRun(
  pipeline: Pipeline,
  ctx: { config: Config; runId: string; inputDir: string; log: Logger; force?: boolean; fetch?: boolean; full?: boolean },
): Promise<{ plan: Plan; skipped: boolean }> {
  const { domain } = pipeline.domain;
  await pruneStaging(ctx.config.dataDir, domain, 6 * 3600_000, [ctx.runId]);
  const base = { config: ctx.config, runId: ctx.runId, log: ctx.log, inputDir: ctx.inputDir };
  const fetched = ctx.fetch !== false && pipeline.fetch ? await pipeline.fetch(base) : [];
  const fetchPlan: FetchPlan = Array.isArray(fetched) ? { fetches: fetched } : fetched;
  const fetches = fetchPlan.fetches;
  const current = await readCurrentManifest(ctx.config.dataDir, domain);
  const incremental = pipeline.incremental
    ? new IncrementalPlanner(
        ctx.inputDir,
        pipeline.incremental.parser,
        // `full`: parse every input (the ledger is still written, so the next run can be incremental).
        ctx.full ? null : await readLedger(ctx.config.dataDir, domain, current),
        {
          parts: pipeline.incremental.reuseParts,
          partsDir: current ? path.join(snapshotDir(ctx.config.dataDir, domain, current.snapshot_id), 'parts') : undefined,
        },
      )
    : undefined;
  const planned = await pipeline.plan({ ...base, fetches, incremental });
  const plan = linkFetches(domain, planned, fetches);
  const incState = incremental?.state(fetches.flatMap((f) => f.outputs));
  if (incState) plan.meta = { ...(plan.meta ?? {}), incremental: incState.counts };
  if (fetchPlan.rejects?.length) plan.rejects = [...(plan.rejects ?? []), ...fetchPlan.rejects];
  if (fetchPlan.meta) plan.meta = { ...(plan.meta ?? {}), ...fetchPlan.meta };
  if (fetches.length) {
    plan.inputDigest = hashCanonical({ local: planned.inputDigest, fetches: fetches.map((f) => f.key), run: ctx.runId });
    ctx.log.info({ domain, fetch_jobs: fetches.length, children: plan.children.length }, 'fetching from the configured remote source');
  }
  if (!ctx.force && current?.input_digest === plan.inputDigest) {
    ctx.log.info(
      { domain, snapshot_id: current.snapshot_id, plan_rejects: plan.rejects?.length ?? 0 },
      'inputs unchanged since the current snapshot: skipping',
    );
    if (plan.rejects?.length) ctx.log.warn({ domain, rejects: plan.rejects }, 'files rejected while planning');
    // A plan may have linked reused parts into the run's staging directory (quotes: `ownParts`): nothing of a
    // skipped run is kept.
    if (pipeline.incremental?.ownParts) await rm(stagingDir(ctx.config.dataDir, domain, ctx.runId), { recursive: true, force: true });
    return { plan, skipped: true };
  }
  const run = await StagingRun.open(ctx.config.dataDir, pipeline.domain, ctx.runId, stagingOptions(ctx.config));
  await run.writeJson('plan', plan);
  if (incState) {
    // Part reuse: the reused inputs' parts are in the run before any child runs (a child never waits for them).
    if (incState.reuse_parts?.length && current)
      await linkReusedParts(snapshotDir(ctx.config.dataDir, domain, current.snapshot_id), run.dir, incState.reuse_parts);
    await run.writeJson(STATE_FILE.replace(/\.json$/, ''), incState);
    ctx.log.info({ domain, ...incState.counts }, 'incremental plan: inputs parsed, reused, removed');
  }
  return { plan, skipped: false };
}

/**
 * Checks the fetch links of a plan and returns it with `fetches` set: every key a child names in
 * `after` is a planned fetch job, and each fetch job is waited for by at most one child (a BullMQ
 * job has one parent); fetch jobs no child names are waited for by publish directly.
 */
export function linkFetches(domain: string, plan: Plan, fetches: FetchJob[]): Plan {
  const keys = new Map(fetches.map((f) => [f.key, f]));
  if (keys.size !== fetches.length) throw new InvalidInputError(`${domain}: duplicate fetch job keys`);
  const claimed = new Set<string>();
  for (const c of plan.children) {
    for (const k of c.after ?? []) {
      if (!keys.has(k)) throw new InvalidInputError(`${domain}: child ${c.step}/${c.key} waits for unknown fetch job ${k}`);
      if (claimed.has(k)) throw new InvalidInputError(`${domain}: fetch job ${k} is waited for by two children`);
      claimed.add(k);
    }
  }
  return { ...plan, fetches };
}

/** Step stage: one child job. Throws on failure (the runner maps the error kind to retry or not). */
export async function processStep(
  pipeline: Pipeline,
  step: string,
  data: unknown,
  ctx: {
    config: Config;
    runId: string;
    log: Logger;
    attempt?: number;
    signal?: AbortSignal;
    progress?: (done: number, total?: number) => void | Promise<void>;
    runner?: 'in-process' | 'bullmq';
  },
): Promise<StepResult> {
  const def = pipeline.steps[step];
  if (!def) throw new InvalidInputError(`unknown step ${pipeline.domain.domain}:${step}`);
  const parsed = def.payload.safeParse(data);
  if (!parsed.success) throw new InvalidInputError(`invalid payload for ${pipeline.domain.domain}:${step}: ${parsed.error.message}`);
  const run = await StagingRun.open(ctx.config.dataDir, pipeline.domain, ctx.runId, stagingOptions(ctx.config));
  return def.process({
    config: ctx.config,
    runId: ctx.runId,
    log: ctx.log,
    signal: ctx.signal,
    data: parsed.data,
    run,
    attempt: ctx.attempt ?? 1,
    progress: ctx.progress ?? (() => undefined),
    runner: ctx.runner ?? 'in-process',
  });
}

/** Publish stage: derives and publishes the run as the domain's new snapshot. */
export async function processPublish(
  pipeline: Pipeline,
  ctx: {
    config: Config;
    runId: string;
    log: Logger;
    inputDigest: string;
    outcomes: ChildOutcome[];
    planRejects?: Plan['rejects'];
    planMeta?: Plan['meta'];
    /** Set when the run fetched (its plan digest covered the run id): the inputs are digested again, as fetched. */
    refreshDigest?: { inputDir: string };
  },
): Promise<PublishResult> {
  const run = await StagingRun.open(ctx.config.dataDir, pipeline.domain, ctx.runId, stagingOptions(ctx.config));
  // Children that failed terminally become file-level rejects, so the report says what was left out and why.
  const failed = ctx.outcomes.filter((o) => o.status === 'failed');
  const fileRejects = [
    ...failed.map((o) => ({
      dataset: `${pipeline.domain.domain}:${o.step}`,
      file: o.key,
      line: null,
      reason: o.error ?? 'failed',
      raw: null,
    })),
    ...(ctx.planRejects ?? []).map((r) => ({
      dataset: `${pipeline.domain.domain}:plan`,
      file: r.file,
      line: null,
      reason: r.reason,
      raw: null,
    })),
  ];
  await run.writeRejects('failed-children', fileRejects);
  const totals = {
    rows: ctx.outcomes.reduce((a, o) => a + o.rows, 0),
    rejects: ctx.outcomes.reduce((a, o) => a + o.rejects, 0) + fileRejects.length,
    children: ctx.outcomes.length,
    failed_children: failed.length,
  };
  // A fetching run's plan digest covers its run id (its inputs were known only once fetched). Published under the
  // digest of its inputs as now on disk, the next run over the same files (nothing new fetched) is skipped.
  const inputDigest = ctx.refreshDigest
    ? (await pipeline.plan({ config: ctx.config, runId: ctx.runId, log: ctx.log, inputDir: ctx.refreshDigest.inputDir, fetches: [] }))
        .inputDigest
    : ctx.inputDigest;
  // Incremental: the snapshot records its inputs (the plan's, plus the files fetched by this run) and carries
  // the previous rows of reused inputs (lib/warehouse/incremental.ts).
  const incState = await readFile(path.join(run.dir, STATE_FILE), 'utf8').then(
    (t) => JSON.parse(t) as IncrementalState,
    () => null,
  );
  if (incState) {
    // Inputs of failed children were not published: left out of the ledger, the next run parses them again.
    const plan = await readFile(path.join(run.dir, 'plan.json'), 'utf8').then(
      (t) => JSON.parse(t) as Plan,
      () => null,
    );
    const failedInputs = failedChildInputs(plan, failed);
    await run.writeJson(LEDGER_FILE.replace(/\.json$/, ''), {
      parser: incState.parser,
      inputs: await completeLedger(incState, failedInputs, pipeline.incremental?.reuseParts ? await readInputParts(run.dir) : []),
    });
  }
  return publishRun(run, {
    keep: ctx.config.SNAPSHOT_KEEP,
    // Part reuse: the reused inputs' rows are already in the run's parts; publish is a full one over them.
    keepParts: pipeline.incremental?.reuseParts === true,
    carry:
      incState?.carry && pipeline.incremental && !pipeline.incremental.reuseParts && !pipeline.incremental.ownParts
        ? {
            reuseSha256: incState.reuse_sha256,
            reuseFiles: incState.reuse_files,
            tables: pipeline.incremental.carryTables,
            via: pipeline.incremental.carryVia,
            delta: pipeline.incremental.deltaKey ? { key: pipeline.incremental.deltaKey } : undefined,
          }
        : undefined,
    memoryLimit: ctx.config.DUCKDB_MEMORY_LIMIT,
    threads: ctx.config.DUCKDB_THREADS,
    inputDigest,
    meta: { totals, ...(ctx.planMeta ?? {}) },
    derive: pipeline.derive ? (conn, d) => pipeline.derive!(conn, { ...d, config: ctx.config, runId: ctx.runId, log: ctx.log }) : undefined,
  });
}

/** The input files (`file`, `files`, `events` of the payload) of the plan's children that failed. */
export function failedChildInputs(plan: Plan | null, failed: ChildOutcome[]): string[] {
  if (!plan || failed.length === 0) return [];
  const bad = new Set(failed.map((o) => `${o.step}\u0000${o.key}`));
  const out: string[] = [];
  for (const c of plan.children) {
    if (!bad.has(`${c.step}\u0000${c.key}`)) continue;
    const d = (c.data ?? {}) as { file?: unknown; files?: unknown; events?: unknown };
    for (const v of [d.file, d.events, ...(Array.isArray(d.files) ? d.files : [])]) if (typeof v === 'string') out.push(v);
  }
  return out;
}

/** Reads child outcomes recorded in a run directory (BullMQ mode: children write them, publish reads). */
export async function readOutcomes(run: StagingRun): Promise<ChildOutcome[]> {
  const dir = path.join(run.dir, 'outcomes');
  const files = await readdir(dir).catch(() => [] as string[]);
  const out: ChildOutcome[] = [];
  for (const f of files) if (f.endsWith('.json')) out.push(JSON.parse(await readFile(path.join(dir, f), 'utf8')));
  return out;
}
