/**
 * The shape of every nightly ingest: a domain pipeline of three stages.
 *
 *   fetch    (optional) plans fetch jobs that download inputs from an outside source into the
 *            run's input directory (each file with a `.meta.json` sidecar: URL, retrieved_at)
 *   plan     scans the inputs (local ones, and the files the fetch jobs will write), returns the
 *            child jobs and a digest of the inputs
 *   step     one child per file or batch: parse (pure, in ingest/) and write parts to the run;
 *            a child that reads fetched files runs after its fetch jobs (`after`)
 *   publish  derive tables and publish the snapshot, after all children (see lib/warehouse/publish.ts)
 *
 * So a run is the tree publish ← parse(file or batch) ← fetch(batch): in BullMQ a
 * nested flow (jobs/bullmq.ts), in process the same order (jobs/in-process.ts).
 *
 * Processors are plain functions of a `StepContext`; the in-process runner
 * (jobs/in-process.ts) and the BullMQ runner (jobs/bullmq.ts) call the same
 * functions, so tests run them without Redis. This file imports no BullMQ.
 */
import type { z } from 'zod';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import type { DomainSpec } from '../lib/warehouse/domain.ts';
import type { IncrementalPlanner } from '../lib/warehouse/incremental.ts';
import type { DeriveContext } from '../lib/warehouse/publish.ts';
import type { SnapshotManifest } from '../lib/warehouse/snapshot.ts';
import type { StagingRun } from '../lib/warehouse/staging.ts';

/** What a child job reports back; summed into the run report and the snapshot manifest. */
export interface StepResult {
  rows: number;
  rejects: number;
  /** Free-form facts (per-table counts, files read). */
  detail?: Record<string, unknown>;
}

export interface ChildJob {
  /** Step name within the pipeline (`submissions`), job name `${domain}:${step}`. */
  step: string;
  /** Deterministic key within the run (a file name, an accession, a CIK batch): duplicates collapse. */
  key: string;
  data: unknown;
  /** A required child that fails fails the run (nothing is published). Others become file-level rejects. */
  required?: boolean;
  /**
   * Keys of the fetch jobs (Plan.fetches) that write this child's input files: the child runs only
   * after all of them completed, and fails (without running) when one of them failed.
   */
  after?: string[];
}

/**
 * A fetch job: downloads inputs from an outside source (EDGAR, Polygon …) into
 * the run's input directory, each file with its `<file>.meta.json` sidecar
 * (`source_url`, `retrieved_at`), so the parse child's origin leaves name the
 * exact URL and retrieval time. Runs as the pipeline step `step` (a normal
 * entry of `Pipeline.steps`, usually `rateLimited`).
 */
export interface FetchJob {
  step: string;
  /** Deterministic key within the run (e.g. `edgar-fetch-submissions-0000320193-25`); never contains ':'. */
  key: string;
  data: unknown;
  /** Absolute paths of the files this job writes (a file it cannot find at the source is removed instead). */
  outputs: string[];
}

/**
 * What `Pipeline.fetch` may return instead of a bare list: the fetch jobs, files found unusable while planning
 * them (an index page that is not one), and facts for the published snapshot's `meta` (e.g. the EDGAR daily-index
 * cursor, kept with the warehouse so it advances only with a published run).
 */
export interface FetchPlan {
  fetches: FetchJob[];
  rejects?: Array<{ file: string; reason: string }>;
  meta?: Record<string, unknown>;
}

export interface Plan {
  /** SHA-256 over the inputs; a run whose digest equals the current snapshot's is skipped unless forced. */
  inputDigest: string;
  children: ChildJob[];
  /** Files found unusable while planning (empty file, unknown format): reported, never silently dropped. */
  rejects?: Array<{ file: string; reason: string }>;
  /** Fetch jobs of this run (from `Pipeline.fetch`); each is waited for by the child naming it in `after`, or by publish. */
  fetches?: FetchJob[];
  /** Facts merged into the published snapshot's `meta` (from a FetchPlan). */
  meta?: Record<string, unknown>;
}

export interface BaseContext {
  config: Config;
  runId: string;
  log: Logger;
  signal?: AbortSignal;
}

export interface PlanContext extends BaseContext {
  inputDir: string;
  /**
   * The fetch jobs planned for this run (`Pipeline.fetch`), not yet run: `plan` must treat their
   * `outputs` as inputs (whether or not an older copy is on disk) and name them in the consuming
   * child's `after`. Empty when no remote source is configured (or fetching is off for the run).
   */
  fetches: FetchJob[];
  /**
   * Set for a pipeline with `incremental` on a run that plans children (not when publish digests the inputs
   * again): `plan` passes every local input to `partition`, then plans children for `settle()`'s files only.
   */
  incremental?: IncrementalPlanner;
}

export interface StepContext<P = unknown> extends BaseContext {
  data: P;
  run: StagingRun;
  /** Reports progress (0-100 or done/total), shown by the CLI and in the queue dashboard. */
  progress(done: number, total?: number): Promise<void> | void;
  attempt: number;
  /**
   * Which runner runs the step. On `bullmq`, a rate-limited step that meets the source's rate-limit
   * page throws at once (the runner hands the job back and pauses the queue); in process it waits.
   */
  runner?: 'in-process' | 'bullmq';
}

// biome-ignore lint/suspicious/noExplicitAny: a pipeline lists steps of different payload types; each step's zod schema types its own payload
export interface PipelineStep<P = any> {
  payload: z.ZodType<P>;
  process(ctx: StepContext<P>): Promise<StepResult>;
  /** Whether this step reads from a rate-limited outside source (routes it to the limited queue). */
  rateLimited?: 'sec';
}

export interface Pipeline {
  domain: DomainSpec;
  /**
   * Optional fetch planning: the fetch jobs of a run when a remote source is configured (else `[]`,
   * and the run reads local inputs only). Runs in the plan job, before `plan`; may itself read a
   * small index from the source (e.g. the EDGAR ticker file) through the same client and limiter.
   */
  fetch?(ctx: Omit<PlanContext, 'fetches'>): Promise<FetchJob[] | FetchPlan>;
  plan(ctx: PlanContext): Promise<Plan>;
  steps: Record<string, PipelineStep>;
  /**
   * Incremental runs (lib/warehouse/incremental.ts): an input whose SHA-256 and `parser` equal the current
   * snapshot's ledger entry is not parsed; publish carries its rows. `parser` versions what the steps make of
   * an input (bump it when parsing changes). `carryTables`: tables of `replaceTables` that children write and
   * publish must carry (derived tables are rebuilt, never carried); `carryVia`: tables whose rows name no
   * input, carried with another table's rows (lib/warehouse/publish.ts, CarryOptions.via). `deltaKey`: publish
   * changes the previous serving database in place and `derive` recomputes only the rows hanging on the changed
   * values of this column (CarryOptions.delta; derive must honour `ctx.delta`). `reuseParts`: instead of carrying
   * rows, a reused input's previous parts are hard-linked into the run and publish is a full one over old and new
   * parts (each child records its input's parts with `StagingRun.recordInputParts`; lib/warehouse/incremental.ts).
   */
  incremental?: {
    parser: string;
    reuseParts?: boolean;
    /**
     * The pipeline reuses an unchanged input itself: its plan hard-links the input's parts from the current
     * snapshot into the run (quotes: jobs/quotes/quote-input-parts.ts, whose sorted parts hold many inputs, which
     * `reuseParts`' one-input parts do not fit), so publish carries nothing and runs as a full publish over the
     * run's parts (needed for parquet-only tables, which publish cannot carry).
     */
    ownParts?: boolean;
    carryTables?: string[];
    carryVia?: Record<string, { key: string; table: string }>;
    deltaKey?: string;
  };
  /** SQL/JS run inside the serving database at publish, after parts load. */
  derive?(conn: DuckDBConnection, ctx: DeriveContext & BaseContext): Promise<void>;
  /** Facts recorded in the manifest's `meta` (used by /ai/feed.json and /api/status). */
  summarize?(manifest: Omit<SnapshotManifest, 'meta'>): Record<string, unknown>;
}

/** Job name of a pipeline stage, e.g. `registry:submissions`, `registry:plan`, `registry:publish`. */
export function jobName(domain: string, stage: string): string {
  return `${domain}:${stage}`;
}

/**
 * Deterministic job id: the same run and key always give the same id, so
 * duplicate enqueues collapse. BullMQ accepts ':' in a custom id only as
 * exactly three segments, so the key joins the run id with '~'
 * (`registry:submissions:<run>~<key>`); keys never contain ':'.
 */
export function jobIdFor(domain: string, stage: string, runId: string, key = ''): string {
  const safeKey = key.replace(/:/g, '_');
  return `${domain}:${stage}:${runId}${safeKey ? `~${safeKey}` : ''}`;
}

/** A run id: the domain, UTC time, and a short random suffix. */
export function newRunId(domain: string, now = new Date()): string {
  const ts = now.toISOString().replace(/[-:.]/g, '').slice(0, 15);
  return `${domain}-${ts}-${Math.random().toString(36).slice(2, 8)}`;
}
