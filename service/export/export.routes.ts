/**
 * Bulk export (docs/architecture.md#bulk-export), Pro tier only:
 *
 *   GET /api/export                                   the exportable tables of the served domains (any tier)
 *   GET /api/export/{domain}/{table}?format=csv       the table of the current snapshot: csv | ndjson | parquet
 *
 * The answer is the file (Content-Disposition: attachment) with `X-Proofline-Snapshot-Id`, `X-Proofline-Rows` and
 * `X-Proofline-Sha256`: the table's SHA-256 in the snapshot manifest, which for `format=parquet` is the SHA-256 of
 * the bytes sent. The request is metered like any other (one request); a client without a Pro API key gets 402.
 */
import { Readable } from 'node:stream';
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import { PaymentRequiredError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { parseQuery } from '../platform/http.ts';
import { exportTablesAnswer } from './export.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { EXPORT_FORMATS, listExportTables, openTableExport } from './export.queries.ts';

const exportQuery = z.object({
  format: z.enum(EXPORT_FORMATS).default('csv').describe('csv (RFC 4180, header row), ndjson, or parquet (the snapshot file itself)'),
});

describeRoute({
  method: 'GET',
  path: '/api/export',
  family: 'export',
  summary: 'Tables of the current snapshots available for bulk export (Pro tier): rows, manifest SHA-256, formats',
  response: exportTablesAnswer,
  statuses: [503],
});
describeRoute({
  method: 'GET',
  path: '/api/export/{domain}/{table}',
  family: 'export',
  summary: 'Bulk export of one table of the current snapshot (Pro tier): CSV, NDJSON, or the parquet file with its manifest SHA-256',
  params: { domain: 'domain (registry, fmcsa, quotes, transcripts)', table: 'table name (GET /api/export lists them)' },
  query: exportQuery,
  statuses: [400, 402, 404, 503],
  contentType: 'text/csv',
});

export function registerExportRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/export', () => listExportTables(deps.readers));
  app.get('/api/export/:domain/:table', async (event) => {
    const { format } = parseQuery(event, exportQuery);
    // The identity the API layer has already metered this request under (service/platform/metering.ts).
    const id = deps.usage?.identify(event.req.headers.get('authorization'), undefined, event.req.headers.get('user-agent'));
    if (id?.tier !== 'pro')
      throw new PaymentRequiredError("bulk export is a Pro tier feature: send 'Authorization: Bearer <key>' with a Pro API key", {
        response: { tier: id?.tier ?? 'free', upgrade: `${deps.options.publicBaseUrl}/docs/rules#pricing` },
      });
    const out = await openTableExport(
      deps.readers,
      deps.options.dataDir,
      getRouterParam(event, 'domain') ?? '',
      getRouterParam(event, 'table') ?? '',
      format,
    );
    const body = Readable.toWeb(out.file.createReadStream()) as ReadableStream<Uint8Array>;
    return new Response(body, {
      status: 200,
      headers: {
        'content-type': out.contentType,
        'content-length': String(out.bytes),
        'content-disposition': `attachment; filename="${out.filename}"`,
        'x-proofline-snapshot-id': out.snapshotId,
        'x-proofline-rows': String(out.rows),
        'x-proofline-sha256': out.sha256,
      },
    });
  });
}
