/**
 * The vetting computation behind `freight_compare_carriers` and the previews (issue 22 item 2): the carrier_risk row
 * is read by position from the packed store (no object of its ~70 columns). It is pinned against the old path: the
 * row object of the SQL path (the same reader without its packed stores), and the snapshot text against the
 * `canonicalize` package's text of the whole snapshot.
 */
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/hash.ts';
import { getRiskSnapshot, loadRiskSnapshot } from '../../service/carriers/carriers.queries.ts';
import { previewVetting, type VettingDeps, vettingDepsOf } from '../../service/vetting/vetting.queries.ts';
import { answer, sqlOnly } from '../helpers/reader-variants.ts';
import { buildWorld, type World } from './fmcsa-world.ts';

let w: World;
let dots: number[];
let vd: VettingDeps;
beforeAll(async () => {
  w = await buildWorld();
  const rows = await w.svc.deps.readers.fmcsa!.query('SELECT dot_number FROM carriers ORDER BY hash(dot_number) LIMIT 150');
  dots = rows.map((r) => Number(r.dot_number));
  const now = new Date('2026-11-26T15:00:00.123Z');
  vd = { ...(await vettingDepsOf(w.svc.deps)), now: () => now };
}, 120_000);
afterAll(async () => w?.close());

describe('the vetting computation of a compare or preview', () => {
  it('reads the carrier_risk row by position exactly as the row object of the SQL path gives it', async () => {
    const fmcsa = w.svc.deps.readers.fmcsa!;
    expect(fmcsa.packed('carrier_snapshot')).not.toBeNull();
    for (const dot of [...dots, 1, 99_999_998]) {
      expect(await answer(() => getRiskSnapshot(fmcsa, dot)), String(dot)).toBe(await answer(() => getRiskSnapshot(sqlOnly(fmcsa), dot)));
    }
  });

  it('writes the snapshot the canonicalize package writes, hashes it as data_hash, and equals the SQL path byte for byte', async () => {
    for (const dot of dots.slice(0, 60)) {
      const p = await previewVetting(vd, dot);
      expect(canonicalize(JSON.parse(p.snapshot_json))).toBe(p.snapshot_json);
      expect(p.data_hash).toBe(sha256Hex(p.snapshot_json));
      expect(JSON.stringify(p)).toBe(JSON.stringify(await previewVetting({ ...vd, fmcsa: sqlOnly(vd.fmcsa) }, dot)));
    }
  });

  it('builds the inputs once per snapshot: every carrier shares one frozen array, spliced as canonicalized', async () => {
    const fmcsa = w.svc.deps.readers.fmcsa!;
    const [a, b] = await Promise.all(dots.slice(0, 2).map((d) => loadRiskSnapshot(fmcsa, d)));
    expect(a!.snapshot.inputs.length).toBeGreaterThan(3);
    expect(b!.snapshot.inputs).toBe(a!.snapshot.inputs);
    expect(Object.isFrozen(a!.snapshot.inputs) && a!.snapshot.inputs.every((i) => Object.isFrozen(i))).toBe(true);
    expect(a!.inputsJson).toBe(canonicalize(a!.snapshot.inputs));
    const p = await previewVetting(vd, dots[0]!);
    expect(JSON.parse(p.snapshot_json).inputs).toEqual(a!.snapshot.inputs);
    expect(p.snapshot_json).toContain(`"inputs":${a!.inputsJson},`);
  });
});
