/**
 * The custody page in a real headless Chromium: rendered DOM, a screenshot and
 * a printed PDF. Skips with a notice when /usr/bin/chromium is absent
 * (`apt-get install -y chromium`).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM)
  console.warn(`[proofline tests] ${CHROMIUM} not found: the custody-page browser test is skipped (apt-get install -y chromium)`);
const run = promisify(execFile);

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.skipIf(!HAS_CHROMIUM)('custody page in headless Chromium', () => {
  let dir: string;
  let svc: TestService;
  let state: StateStore;
  let server: ReturnType<typeof serve>;
  let url: string;
  let id: string;

  beforeAll(async () => {
    dir = await tempDir('proofline-page-');
    state = await StateStore.open(stateDbPath(dir));
    svc = await buildTestService(testConfig(dir), [], { state });
    id = (
      await getJson(
        svc.app,
        '/api/care',
        post({
          shipment: { ref: 'BOL-7731', commodity: 'pharmaceuticals <cold chain>', value_usd: 412000.5 },
          parties: { broker: { name: 'Acme Logistics' }, carrier: { name: 'VERIHA TRUCKING INC', dot_number: 158121 } },
        }),
      )
    ).body.document_id;
    const events = [
      { stage: 'TENDER', actor: { name: 'Ann Lee', role: 'broker dispatcher' }, evidence: { rate_confirmation: 'RC-5512' } },
      {
        stage: 'PICKUP_HANDOFF',
        actor: { name: 'J. Ruiz', role: 'driver' },
        evidence: { seal: 'SL-778812', temp_f: 38, photo_sha256: 'ab'.repeat(32) },
      },
      { stage: 'IN_TRANSIT', actor: 'ELD feed', evidence: { lat: 41.88, lon: -87.63 } },
      { stage: 'DELIVERY_HANDOFF', actor: { name: 'R. Chen', role: 'consignee' }, evidence: { seal_intact: true, pod: 'POD-9921' } },
    ];
    for (const e of events) await getJson(svc.app, `/api/care/${id}/event`, post(e));
    server = serve(svc.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
    await server.ready();
    url = server.url!.replace(/\/$/, '');
  }, 180_000);
  afterAll(async () => {
    await server?.close(true);
    await svc?.close();
    await state?.close().catch(() => undefined);
    await removeDir(dir);
  });

  const flags = () => [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    `--user-data-dir=${path.join(dir, 'chrome')}`,
  ];

  it('renders the shipment, every custody event and the verification verdict', async () => {
    const { stdout } = await run(CHROMIUM, [...flags(), '--dump-dom', `${url}/api/care/${id}`], {
      timeout: 60_000,
      maxBuffer: 10 * 1024 * 1024,
    });
    expect(stdout).toContain(`Document <strong>${id}</strong>`);
    expect(stdout).toContain('Chain verified: 4 of 4 events intact');
    expect(stdout).toContain('pharmaceuticals &lt;cold chain&gt;'); // escaped, not markup
    expect(stdout).toContain('$412,000.50');
    expect(stdout.match(/<tr><td>\d+<\/td>/g)).toHaveLength(4);
    for (const s of ['TENDER', 'PICKUP_HANDOFF', 'IN_TRANSIT', 'DELIVERY_HANDOFF']) expect(stdout).toContain(`<td class="stage">${s}</td>`);
    expect(stdout).toContain('rel="ai-discovery"');
  }, 180_000);

  it('prints to PDF and screenshots as a page a person can read', async () => {
    const pdf = path.join(dir, 'custody.pdf');
    const png = path.join(dir, 'custody.png');
    await run(CHROMIUM, [...flags(), '--no-pdf-header-footer', `--print-to-pdf=${pdf}`, `${url}/api/care/${id}`], { timeout: 60_000 });
    await run(CHROMIUM, [...flags(), '--window-size=1200,1400', `--screenshot=${png}`, `${url}/api/care/${id}`], { timeout: 60_000 });
    // CUSTODY_PAGE_OUT=<dir> keeps the rendered files for a human look.
    if (process.env.CUSTODY_PAGE_OUT)
      for (const f of [pdf, png]) await copyFile(f, path.join(process.env.CUSTODY_PAGE_OUT, path.basename(f)));
    expect((await readFile(pdf)).subarray(0, 5).toString()).toBe('%PDF-');
    expect((await stat(pdf)).size).toBeGreaterThan(10_000);
    expect((await readFile(png)).subarray(1, 4).toString()).toBe('PNG');
    expect((await stat(png)).size).toBeGreaterThan(20_000);
  }, 120_000);
});
