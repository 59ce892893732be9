/**
 * Batched source records: the same `sources` rows and source leaves as
 * `StagingRun.recordSource`, written as one part per child job instead of one
 * parquet part per file (a part costs a DuckDB conversion: per-file parts made
 * a batch of 250 documents spend most of its time writing tiny files).
 */
import { createSourceLeaf, type OriginLeaf } from '../../lib/origin.ts';
import type { IngestedSource, StagingRun } from '../../lib/warehouse/staging.ts';

export class SourceBatch {
  private readonly rows: object[] = [];
  readonly leaves: OriginLeaf[] = [];

  constructor(private readonly run: StagingRun) {}

  /** Records one ingested input; returns its source leaf. */
  add(src: IngestedSource, counts: { rows?: number; rejects?: number } = {}): OriginLeaf {
    const leaf = createSourceLeaf(src);
    this.leaves.push(leaf);
    this.rows.push({
      run_id: this.run.runId,
      dataset: src.source,
      path: src.path,
      source_url: src.source_url,
      byte_size: src.byte_size,
      content_sha256: src.content_sha256,
      retrieved_at: src.retrieved_at,
      ingested_at: new Date().toISOString(),
      leaf_hash: leaf.leaf_hash,
      row_count: counts.rows ?? null,
      reject_count: counts.rejects ?? null,
    });
    return leaf;
  }

  /** Writes the batch's `sources` part and its source leaves under `key`. */
  async flush(key: string): Promise<void> {
    await this.run.writeRows('sources', `sources-${key}`, this.rows);
    await this.run.writeLeaves(`sources-${key}`, this.leaves, 'sources');
  }
}
