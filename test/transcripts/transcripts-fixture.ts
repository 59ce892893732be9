/** Copies real transcript fixtures into a temp input tree (never into the repo) and runs the transcripts pipeline. */
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '../../lib/log.ts';
import type { Config } from '../../lib/config.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { fixture } from '../helpers/shared.ts';

/** [fixture path under sec/transcripts, target path under <input>/transcripts]. */
export const TRANSCRIPT_FIXTURES: Array<[string, string]> = [
  ['earningscall/AAPL_2022_Q1.level2.json', 'earningscall/AAPL_2022_Q1.level2.json'],
  ['earningscall/AAPL_2022_Q1.level3.json', 'earningscall/AAPL_2022_Q1.level3.json'],
  ['earningscall/AAPL_2022_Q1.level4.json', 'earningscall/AAPL_2022_Q1.level4.json'],
  ['earningscall/AAPL_2023_Q1.level2.speaker-map.json', 'earningscall/AAPL_2023_Q1.level2.speaker-map.json'],
  ['earningscall/NVDA_2025_Q2.level4.json', 'earningscall/NVDA_2025_Q2.level4.json'],
  ['earningscall/MSFT_2023_Q1.level1.json', 'earningscall/MSFT_2023_Q1.level1.json'],
  ['earningscall/MSFT.events.json', 'earningscall/MSFT.events.json'],
  ['motley-json/JWN_q4_2021.json', 'motley/JWN_q4_2021.json'],
  ['pdf/CRCL_2025Q3.pdf', 'pdf/CRCL_2025Q3.pdf'],
  ['pdf/INTC_2025Q3.pdf', 'pdf/INTC_2025Q3.pdf'],
];

export async function copyTranscriptFixtures(inputDir: string, files = TRANSCRIPT_FIXTURES): Promise<void> {
  for (const [from, to] of files) {
    const target = path.join(inputDir, 'transcripts', to);
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(fixture(`sec/transcripts/${from}`), target);
  }
}

export async function ingestTranscripts(config: Config, inputDir: string) {
  return runPipelineInProcess(transcriptsPipeline, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
}
