/** GET /api/status and GET /api/attestation (signed root hash over the fmcsa table hashes, with provenance). */
import type { H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { attestationAnswer, statusAnswer } from './attestation.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { signingKeyOf } from '../platform/guards.ts';
import { getAttestation, getStatus } from './attestation.queries.ts';

describeRoute({
  method: 'GET',
  path: '/api/status',
  family: 'attestation',
  summary: 'Record counts per dataset and table, dataset as-of dates, database and model versions, state counts',
  response: statusAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/attestation',
  family: 'attestation',
  summary: 'Signed root hash over the fmcsa table hashes, each table hash, and the provenance chain from source files to tables',
  statuses: [503],
  response: attestationAnswer,
});

export function registerAttestationRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/status', () => getStatus(deps.readers, deps.state, deps.options.version, deps.now()));
  app.get('/api/attestation', async () => getAttestation(deps.readers.fmcsa, await signingKeyOf(deps)));
}
