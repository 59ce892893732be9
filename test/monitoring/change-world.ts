/**
 * Two published FMCSA snapshots from the sample with known differences: the
 * small sample is published (snapshot A), then three carriers are changed in
 * the input files and the real pipeline publishes again (snapshot B):
 * - `revoked`: every authority docket of the carrier goes inactive (L&I carrier file);
 * - `oos`: a new active out-of-service order (OOS orders file);
 * - `risk`: BIPD on file drops below the required minimum (INSURANCE_BELOW_REQUIRED: risk level changes).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { ingestAll } from '../helpers/app.ts';
import type { StateBackend } from '../helpers/state-backends.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';

export interface ChangeWorld extends World {
  prevId: string;
  nextId: string;
  changed: { revoked: number; oos: number; risk: number };
  /** Carriers unchanged between A and B. */
  unchanged: number[];
}

function editCsv(file: string, edit: (cols: string[], header: string[]) => string[] | null, append: string[] = []): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  const header = lines[0]!.split(',');
  const out = [lines[0]!];
  for (const l of lines.slice(1)) {
    if (!l) continue;
    const cols = l.split(',');
    const e = edit(cols, header);
    out.push((e ?? cols).join(','));
  }
  writeFileSync(file, `${[...out, ...append].join('\n')}\n`);
}

export async function buildChangeWorld(backend?: StateBackend): Promise<ChangeWorld> {
  const w = await buildWorld({}, {}, backend);
  const fmcsa = w.svc.deps.readers.fmcsa!;
  const prevId = fmcsa.manifest!.snapshot_id;
  const rows = await fmcsa.query(
    `SELECT dot_number FROM carrier_risk
     WHERE authority_status = 'ACTIVE' AND oos_orders_active = 0 AND risk_level = 'LOW' AND bipd_on_file_k >= bipd_required_k
       AND bipd_required_k > 10 AND NOT list_contains(red_flag_codes, 'INSURANCE_BELOW_REQUIRED')
     ORDER BY dot_number LIMIT 13`,
  );
  const dots = rows.map((r) => Number(r.dot_number));
  const [revoked, oos, risk, ...unchanged] = dots as [number, number, number, ...number[]];
  const input = path.join(w.root, 'input', 'fmcsa');
  const carrierFile = path.join(input, 'licensing', 'Carrier_All_With_History.txt');
  editCsv(carrierFile, (c, h) => {
    const dot = Number(c[h.indexOf('DOT_NUMBER')]);
    if (dot === revoked) for (const k of ['COMMON_STAT', 'CONTRACT_STAT', 'BROKER_STAT']) c[h.indexOf(k)] = 'I';
    if (dot === risk) c[h.indexOf('BIPD_FILE')] = '00010';
    return c;
  });
  editCsv(path.join(input, 'oos', 'OUT_OF_SERVICE_ORDERS.csv'), () => null, [
    `${oos},MONITORED CARRIER ${oos},,2026-11-18,Imminent hazard,ACTIVE,`,
  ]);
  await ingestAll(w.config, [fmcsaPipeline], path.join(w.root, 'input'));
  await fmcsa.refresh();
  const nextId = fmcsa.manifest!.snapshot_id;
  if (nextId === prevId) throw new Error('second publish did not happen');
  return Object.assign(w, { prevId, nextId, changed: { revoked, oos, risk }, unchanged });
}
