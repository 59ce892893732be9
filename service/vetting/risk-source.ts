/**
 * The one place vetting reads the FMCSA warehouse: `getRiskSnapshot` from the
 * carriers family (issue 5), so REST, batch, preview and MCP vettings all use
 * the same query and the same risk model.
 */
import type { CarrierFeatures, RiskAssessment } from '../../ingest/fmcsa/risk-model.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { getRiskSnapshot } from '../carriers/carriers.queries.ts';

/** One input of a vetting: which dataset, as of when, fetched when, which bytes. */
export interface SnapshotInput {
  dataset: string;
  as_of: string | null;
  retrieved_at: string | null;
  content_sha256: string | null;
  [k: string]: unknown;
}

export interface RiskSnapshot {
  features: CarrierFeatures;
  assessment: RiskAssessment;
  inputs: SnapshotInput[];
}

/** Features, assessment and inputs of one carrier from the current fmcsa snapshot (NotFoundError when unknown). */
export async function loadRiskSnapshot(fmcsa: SnapshotReader, dot: number): Promise<RiskSnapshot> {
  const r = await getRiskSnapshot(fmcsa, dot);
  return { features: r.features, assessment: r.assessment, inputs: r.inputs.map((i) => ({ ...i })) };
}
