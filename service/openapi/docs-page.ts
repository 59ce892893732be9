/**
 * The API reference at /docs: Redoc (the `redoc` package's standalone bundle, served by this process from
 * node_modules at /docs/redoc.standalone.js: no CDN, so it works in a container without network) rendering
 * /openapi.json. The rules every endpoint shares and the pricing are at /docs/rules (rules-page.ts), linked from
 * the page's header. Tested in headless Chromium (test/api/docs-browser.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { withDiscoveryLink } from '../platform/discovery-html.ts';

export const REDOC_SCRIPT_PATH = '/docs/redoc.standalone.js';

let bundle: Promise<Buffer> | null = null;

/** The Redoc standalone bundle, read once from node_modules. */
export function readRedocBundle(): Promise<Buffer> {
  bundle ??= readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
  return bundle;
}

/** The /docs page: a header linking the shared rules, then Redoc over /openapi.json. */
export function renderDocsPage(version: string): string {
  return withDiscoveryLink(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Proofline API reference ${version}</title>
<style>body{margin:0} header{font:14px/1.4 system-ui,sans-serif;padding:8px 16px;border-bottom:1px solid #ddd}</style>
</head>
<body>
<header>Proofline API ${version}: <a href="/docs/rules">shared rules, errors, limits and pricing</a> · <a href="/openapi.json">openapi.json</a> · <a href="/">home</a></header>
<div id="redoc"></div>
<script src="${REDOC_SCRIPT_PATH}"></script>
<script>Redoc.init('/openapi.json', { expandResponses: '200', hideDownloadButton: false }, document.getElementById('redoc'));</script>
</body>
</html>
`);
}
