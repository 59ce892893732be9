/**
 * Stable warehouse paths (docs/operations.md#warehouse-paths): at publish, `warehouse/current/<domain>` links to
 * the current snapshot and `warehouse/current.sql` creates a view per table over those links. A fresh DuckDB that
 * runs current.sql (what `duckdb -init` does) sees the same table names and rows as `proofline sql`, and a session
 * opened before the next publish reads the new snapshot through the same views.
 */
import { readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { fmcsaSampleGenerator } from '../../ingest/fmcsa/fmcsa.sample.ts';
import { currentLinkPath, currentSqlPath, snapshotDir } from '../../lib/warehouse/layout.ts';
import { readCurrentPointer, readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { openWarehouseViews } from '../../lib/warehouse/views.ts';
import { ingestAll } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

let root: string;
let dataDir: string;
let inputDir: string;
beforeAll(async () => {
  root = await tempDir('proofline-current-');
  dataDir = path.join(root, 'data');
  inputDir = path.join(root, 'in');
  await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator, fmcsaSampleGenerator] });
  await ingestAll(testConfig(dataDir), [registryPipeline, fmcsaPipeline], inputDir);
}, 300_000);
afterAll(async () => removeDir(root));

async function countsVia(run: (sql: string) => Promise<number>, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) {
    const [d, name] = t.split('.');
    out[t] = await run(`SELECT count(*)::INTEGER AS n FROM "${d}"."${name}"`);
  }
  return out;
}

describe('warehouse/current links and current.sql', { timeout: 300_000 }, () => {
  it('links each domain to the snapshot CURRENT names, by a relative link', async () => {
    for (const d of ['registry', 'fmcsa']) {
      const pointer = await readCurrentPointer(dataDir, d);
      expect(await readlink(currentLinkPath(dataDir, d))).toBe(path.join('..', d, 'snapshots', pointer!.snapshot_id));
      expect(await realpath(currentLinkPath(dataDir, d))).toBe(await realpath(snapshotDir(dataDir, d, pointer!.snapshot_id)));
    }
  });

  it('gives a fresh DuckDB running current.sql the table names and rows of proofline sql, and follows the next publish', async () => {
    const sqlText = await readFile(currentSqlPath(dataDir), 'utf8');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(sqlText);
    const names = (
      await (
        await conn.runAndReadAll(
          "SELECT table_schema || '.' || table_name AS t FROM information_schema.tables WHERE table_schema <> 'main' ORDER BY 1",
        )
      ).getRowObjectsJson()
    ).map((r) => r.t as string);

    const cli = await openWarehouseViews(dataDir);
    expect(names).toEqual([...cli.tables].sort());
    expect(names).toContain('registry.companies');
    expect(names.some((t) => t.startsWith('fmcsa.'))).toBe(true);
    const count = (c: typeof conn) => async (sql: string) => Number((await c.runAndReadAll(sql)).getRowObjectsJson()[0]!.n);
    const viaFile = await countsVia(count(conn), names);
    expect(viaFile).toEqual(await countsVia(count(cli.conn), cli.tables));
    // Each table counts its current snapshot's rows once (a glob over snapshots/ would count them once per snapshot).
    const manifest = await readCurrentManifest(dataDir, 'registry');
    for (const [t, tm] of Object.entries(manifest!.tables))
      if (typeof (tm as { rows?: number }).rows === 'number') expect(viaFile[`registry.${t}`], t).toBe((tm as { rows: number }).rows);

    // A second publish swaps the link; the session opened before reads the new snapshot through the same views.
    const before = (await readCurrentPointer(dataDir, 'registry'))!.snapshot_id;
    await ingestAll(testConfig(dataDir), [registryPipeline], inputDir);
    const after = (await readCurrentPointer(dataDir, 'registry'))!.snapshot_id;
    expect(after).not.toBe(before);
    expect(await readlink(currentLinkPath(dataDir, 'registry'))).toContain(after);
    expect(await count(conn)('SELECT count(*)::INTEGER AS n FROM registry.companies')).toBe(viaFile['registry.companies']);
    conn.closeSync();
    cli.conn.closeSync();
  });
});
