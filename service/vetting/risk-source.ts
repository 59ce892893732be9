/**
 * The one place vetting reads the FMCSA warehouse: `getRiskSnapshot` from the
 * carriers family (issue 5), so REST, batch, preview and MCP vettings all use
 * the same query and the same risk model.
 */
import type { CarrierFeatures, RiskAssessment } from '../../ingest/fmcsa/risk-model.ts';
import type { OriginLeaf } from '../../lib/origin.ts';
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
  /**
   * The origin leaf of the carrier_risk row the features came from: `record_sha256` is the SHA-256 of the RFC 8785
   * JSON of `features`, `content_sha256` the published carrier_risk parquet file's SHA-256 (its manifest entry).
   */
  origin: OriginLeaf;
}

/** Features, assessment and inputs of one carrier from the current fmcsa snapshot (NotFoundError when unknown). */
export async function loadRiskSnapshot(fmcsa: SnapshotReader, dot: number): Promise<RiskSnapshot> {
  const r = await getRiskSnapshot(fmcsa, dot);
  return { features: r.features, assessment: r.assessment, inputs: r.inputs.map((i) => ({ ...i })), origin: r.origin };
}
