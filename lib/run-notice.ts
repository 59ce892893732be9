/**
 * Run notices: how a pipeline run that published or failed reaches the
 * webhooks. The run may execute in any process (a BullMQ worker, `npm run
 * ingest`, `npm start`); the state store belongs to one API process. So the
 * run writes one small JSON file, atomically (temp file + rename), under
 * DATA_DIR/state/outbox/, and the process owning the state store imports it
 * (service/monitoring: an event run.published / run.failed) and then deletes
 * it. A notice written while no API process runs waits on disk.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

export const runNoticeSchema = z.object({
  type: z.enum(['run.published', 'run.failed']),
  domain: z.string(),
  run_id: z.string(),
  snapshot_id: z.string().nullable(),
  /** Rows loaded and rejects (file-level rejects and failed children included), as the run report counts them. */
  counts: z.object({ rows: z.number(), rejects: z.number(), failed_children: z.number() }),
  /** The failed children: step, key and error. */
  failed_children: z.array(z.object({ step: z.string(), key: z.string(), error: z.string().nullable() })),
  error: z.string().nullable(),
  at: z.string(),
});
export type RunNotice = z.infer<typeof runNoticeSchema>;

export function outboxDir(dataDir: string): string {
  return path.join(dataDir, 'state', 'outbox');
}

/** Writes a notice (one file per run and outcome; writing it twice leaves one file). */
export async function writeRunNotice(dataDir: string, notice: RunNotice): Promise<string> {
  const dir = outboxDir(dataDir);
  await mkdir(dir, { recursive: true });
  const safe = `${notice.type}-${notice.run_id}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  const file = path.join(dir, `${safe}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(runNoticeSchema.parse(notice)));
  await rename(tmp, file);
  return file;
}

/** The notices waiting in the outbox, oldest name first, each with a `remove()` to call once it is handled. */
export async function readRunNotices(dataDir: string): Promise<Array<{ notice: RunNotice; remove: () => Promise<void> }>> {
  const dir = outboxDir(dataDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: Array<{ notice: RunNotice; remove: () => Promise<void> }> = [];
  for (const n of names.filter((x) => x.endsWith('.json')).sort()) {
    const file = path.join(dir, n);
    const parsed = runNoticeSchema.safeParse(JSON.parse(await readFile(file, 'utf8').catch(() => 'null')));
    // An unreadable notice is moved aside rather than retried forever.
    if (!parsed.success) await rename(file, `${file}.invalid`).catch(() => undefined);
    else out.push({ notice: parsed.data, remove: () => rm(file, { force: true }) });
  }
  return out;
}
