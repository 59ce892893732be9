/**
 * /docs in a real browser: headless Chromium (/usr/bin/chromium, driven by playwright-core) loads the page from a
 * real HTTP server on loopback, Redoc renders from the script this server sends (no other origin is reached), and
 * every operation of /openapi.json is listed. Skips when Chromium is absent unless REQUIRE_CHROMIUM=1.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { createNodeListener } from '../../service/platform/node-listener.ts';
import { buildTestService, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM && process.env.REQUIRE_CHROMIUM === '1') throw new Error(`REQUIRE_CHROMIUM=1 but ${CHROMIUM} is missing`);

describe.skipIf(!HAS_CHROMIUM)('/docs in headless Chromium', { timeout: 180_000 }, () => {
  let dir: string;
  let svc: TestService;
  let server: Server;
  let url: string;
  let browser: Browser;
  beforeAll(async () => {
    dir = await tempDir('proofline-docs-');
    svc = await buildTestService(testConfig(dir), []);
    server = createServer(createNodeListener(svc.app, undefined, silentLogger));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    svc.deps.options.publicBaseUrl = url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await svc?.close();
    await removeDir(dir);
  });

  it('renders Redoc from this server alone and lists every operation of /openapi.json', async () => {
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary?: string }>> };
    const operations = Object.values(doc.paths).flatMap((ops) => Object.keys(ops));
    expect(operations.length).toBeGreaterThan(40);

    const page = await browser.newPage();
    // As in a container without network: anything not from this server is refused.
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      const u = route.request().url();
      if (u.startsWith(url) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
      foreign.push(u);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/docs`, { waitUntil: 'load' });
    // Redoc's side menu: one entry per operation, each with its HTTP method badge.
    await page.waitForSelector('[role="menuitem"] .operation-type', { state: 'attached', timeout: 120_000 });
    const listed = await page.locator('[role="menuitem"] .operation-type').count();
    expect(listed).toBe(operations.length);
    const methods = await page.locator('[role="menuitem"] .operation-type').allTextContents();
    expect(methods.filter((m) => m.trim().toLowerCase() === 'post').length).toBe(operations.filter((m) => m === 'post').length);
    expect(await page.locator('h1').first().textContent()).toBeTruthy();
    expect(errors).toEqual([]);
    // The only other address is Redoc's decorative sidebar logo, which hides itself when it cannot load.
    expect(foreign.filter((u) => u !== 'https://cdn.redoc.ly/redoc/logo-mini.svg')).toEqual([]);
    await page.close();
  });

  it('is linked from the home page, llms.txt and the discovery manifest', async () => {
    expect(await (await fetch(`${url}/`)).text()).toContain('<a href="/docs">API reference</a>');
    expect(await (await fetch(`${url}/llms.txt`)).text()).toContain(`[API reference](${url}/docs)`);
    // Spec 002 types humanReadable as a string (the home page); the API reference sits beside it.
    const manifest = (await (await fetch(`${url}/.well-known/ai`)).json()) as { humanReadable: string; apiReference: string };
    expect(manifest.apiReference).toBe(`${url}/docs`);
  });
});
