/**
 * The one place vetting reads the FMCSA warehouse: `getRiskSnapshot` from the
 * carriers family (issue 5), so REST, batch, preview and MCP vettings all use
 * the same query and the same risk model.
 */
import type { CarrierFeatures, RiskAssessment } from '../../ingest/fmcsa/risk-model.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';

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

type GetRiskSnapshot = (fmcsa: SnapshotReader, dot: number) => Promise<unknown>;
let impl: GetRiskSnapshot | null = null;

/** Features, assessment and inputs of one carrier from the current fmcsa snapshot (NotFoundError when unknown). */
export async function loadRiskSnapshot(fmcsa: SnapshotReader, dot: number): Promise<RiskSnapshot> {
  if (!impl) {
    const spec = '../carriers/carriers.queries.ts';
    impl = ((await import(spec)) as { getRiskSnapshot: GetRiskSnapshot }).getRiskSnapshot;
  }
  const r = (await impl(fmcsa, dot)) as Record<string, unknown>;
  const assessment = (r.assessment ?? r.risk ?? r.risk_assessment) as RiskAssessment;
  return { features: r.features as CarrierFeatures, assessment, inputs: (r.inputs ?? []) as SnapshotInput[] };
}
