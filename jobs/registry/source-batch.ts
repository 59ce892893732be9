/**
 * Batched source records: the same `sources` rows and source leaves as
 * `StagingRun.recordSource`, written as one part per child job instead of one
 * parquet part per file (a part costs a DuckDB conversion: per-file parts made
 * a batch of 250 documents spend most of its time writing tiny files).
 */
import { createSourceLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { sourceRow, type IngestedSource, type SourceCounts, type StagingRun } from '../../lib/warehouse/staging.ts';

export class SourceBatch {
  private readonly rows: object[] = [];
  readonly leaves: OriginLeaf[] = [];

  constructor(private readonly run: StagingRun) {}

  /** Records one ingested input; returns its source leaf. */
  add(src: IngestedSource, counts: SourceCounts = {}): OriginLeaf {
    const leaf = createSourceLeaf(src);
    this.leaves.push(leaf);
    this.rows.push(sourceRow(this.run.runId, src, leaf, counts));
    return leaf;
  }

  /** Writes the batch's `sources` part and its source leaves under `key`. */
  async flush(key: string): Promise<void> {
    await this.run.writeRows('sources', `sources-${key}`, this.rows);
    await this.run.writeLeaves(`sources-${key}`, this.leaves, 'sources');
  }
}
