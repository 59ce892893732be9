/**
 * Every domain pipeline, in the order `npm start` runs them. Adding a domain is
 * one line here. Startup fails if two pipelines claim the same domain.
 */
import type { Pipeline } from './pipeline.ts';
import { registryPipeline } from './registry/registry.pipeline.ts';
import { fmcsaPipeline } from './fmcsa/fmcsa.pipeline.ts';
import { quotesPipeline } from './quotes/quotes.pipeline.ts';
import { transcriptsPipeline } from './transcripts/transcripts.pipeline.ts';

export const pipelines: Pipeline[] = [registryPipeline, fmcsaPipeline, quotesPipeline, transcriptsPipeline];

const seen = new Set<string>();
for (const p of pipelines) {
  if (seen.has(p.domain.domain)) throw new Error(`two pipelines for domain ${p.domain.domain}`);
  seen.add(p.domain.domain);
}

export function pipelineFor(domain: string): Pipeline {
  const p = pipelines.find((x) => x.domain.domain === domain);
  if (!p) throw new Error(`unknown domain ${domain}; known: ${pipelines.map((x) => x.domain.domain).join(', ')}`);
  return p;
}
