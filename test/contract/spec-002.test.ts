/**
 * The discovery files Proofline publishes (`/.well-known/ai`, knowledge,
 * feed, archive, page manifest), built in process over a tiny registry and
 * fmcsa warehouse, checked against the contract tables of spec-002.table.ts
 * (`../shared/spec/002_b1123c327d6ca789.txt`) at tier 2 and at tier 3; and
 * the same tables against the real manifests of the standard's authors in
 * ../shared/fixtures/discovery, so the tables are known to read real files.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bytesToHex } from '@noble/hashes/utils.js';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecretKey } from '../../lib/discovery/index.ts';
import type { ServiceOptions } from '../../service/platform/deps.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { tinyRegistry } from '../discovery/discovery-helpers.ts';
import { checkShape, type ContractTable } from './shape.ts';
import { archiveFile, discoveryFile, feedFile, knowledgeFile, pageManifest, signatureTier3 } from './spec-002.table.ts';

const BASE = 'http://proofline.test';
const FILES: [string, ContractTable][] = [
  ['/.well-known/ai', discoveryFile],
  ['/ai/knowledge.json', knowledgeFile],
  ['/ai/feed.json', feedFile],
  ['/.well-known/archive', archiveFile],
  ['/ai/pages.json', pageManifest],
];

let dir: string;
let config: Awaited<ReturnType<typeof tinyRegistry>>['config'];
const open: TestService[] = [];
async function service(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const svc = await buildTestService(config, ['registry', 'fmcsa'], {
    options: { publicBaseUrl: BASE, snapshotStaleHours: 48, version: '0.0.0-test', dataDir: config.dataDir, ...options },
  });
  open.push(svc);
  return svc;
}
beforeAll(async () => {
  ({ dir, config } = await tinyRegistry({ fmcsa: true }));
}, 120_000);
afterAll(async () => {
  for (const s of open) await s.close();
  await removeDir(dir);
});

describe('spec 002 contract: the files Proofline publishes', () => {
  it.each(FILES)('%s speaks its table at tier 2', async (p, table) => {
    const svc = await service();
    const r = await getJson(svc.app, p);
    expect(r.status, p).toBe(200);
    expect(r.headers.get('access-control-allow-origin'), p).toBe('*');
    expect(checkShape(r.body, table)).toEqual([]);
  });

  it('names the standard of each file, keeps the manifest pages a site map and advertises the page manifest in capabilities', async () => {
    const svc = await service();
    const m = (await getJson(svc.app, '/.well-known/ai')).body;
    expect(m.standard).toBe('ai-discovery');
    expect(m.pages.every((p: Record<string, unknown>) => typeof p.path === 'string' && typeof p.purpose === 'string')).toBe(true);
    expect(m.capabilities.pages).toMatchObject({ available: true, url: `${BASE}/ai/pages.json` });
    expect((await getJson(svc.app, '/.well-known/archive')).body.standard).toBe('ai-archive');
    expect((await getJson(svc.app, '/ai/pages.json')).body.standard).toBe('ai-page-manifest');
  });

  it('adds the Digital Name at tier 3: organization.digitalName on the manifest and the archive, and the tier-3 signature fields', async () => {
    const keyPath = path.join(dir, 'contract-discovery.key');
    await writeFile(keyPath, bytesToHex(generateSecretKey()), { mode: 0o600 });
    const svc = await service({ discoveryKeyPath: keyPath });
    for (const [p, table] of FILES) {
      const { body } = await getJson(svc.app, p);
      expect(checkShape(body, table), p).toEqual([]);
      expect(checkShape(body, signatureTier3), p).toEqual([]);
    }
    const m = (await getJson(svc.app, '/.well-known/ai')).body;
    const a = (await getJson(svc.app, '/.well-known/archive')).body;
    expect(m.organization.digitalName).toBe(m._signature.digitalName);
    expect(a.organization).toMatchObject({ name: m.organization.name, digitalName: m._signature.digitalName });
  });
});

describe.skipIf(!HAS_SHARED)('spec 002 contract tables against the real files of the standard', () => {
  const read = (rel: string) => JSON.parse(readFileSync(fixture(`discovery/${rel}`), 'utf8'));

  it('finds the reference manifest conforming in every field the tables type except its object-valued standard', () => {
    const problems = checkShape(read('rootz-ai-discovery-spec/ai.json'), discoveryFile);
    expect(problems).toEqual([
      `002_b1123c327d6ca789.txt: Discovery file: standard should be string, got ${JSON.stringify(read('rootz-ai-discovery-spec/ai.json').standard).slice(0, 80)} (at standard)`,
    ]);
  });

  it('names the drift of the proof-site manifest: no standard, no coreConcepts, boolean capabilities', () => {
    const problems = checkShape(read('rootz-proof-site/well-known-ai.json'), discoveryFile).join('\n');
    expect(problems).toMatch(/standard is required but missing/);
    expect(problems).toMatch(/coreConcepts is required but missing/);
    expect(problems).toMatch(/capabilities\.knowledge should be object, got true/);
  });

  it('finds the reference feed items carry category and tags, and lack only assertionType', () => {
    const problems = checkShape(read('rootz-ai-discovery-spec/feed.json'), {
      ...feedFile,
      fields: feedFile.fields.filter((f) => !f.path.startsWith('_signature')),
    });
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p).toMatch(/items\[\]\.assertionType is required but missing/);
  });
});
