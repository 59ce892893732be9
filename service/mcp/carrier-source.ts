/**
 * The carriers family's query functions (issue 5, service/carriers/carriers.queries.ts),
 * re-exported in one place so MCP tools and REST call the very same functions.
 */
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import * as carriers from '../carriers/carriers.queries.ts';

/** The carriers query module. */
export async function carriersApi(): Promise<typeof carriers> {
  return carriers;
}

/** getDatasetStatus of the carriers family (per-dataset counts and as-of dates). */
export function getDatasetStatusOf(fmcsa: SnapshotReader): Promise<unknown> {
  return carriers.getDatasetStatus(fmcsa);
}
