/**
 * The one registry of MCP tools (freight and registry), and what other
 * families may read of it: the catalogue that /.well-known/ai, /llms.txt and
 * the server's `instructions` are generated from, so they cannot drift from
 * `tools/list` (issue 23).
 */
import { z } from 'zod';
import { FREIGHT_TOOLS } from './freight.tools.ts';
import { SEC_TOOLS } from './sec.tools.ts';
import type { ToolDef } from './tool-kit.ts';

export const TOOLS: ToolDef[] = [...FREIGHT_TOOLS, ...SEC_TOOLS];

/** The first sentence of a description: the one-line summary listed in discovery files. */
export function summaryOf(description: string): string {
  const m = /^.*?[.!?](?=\s+[A-Z]|$)/s.exec(description);
  return (m ? m[0] : description).trim();
}

export interface McpToolSummary {
  name: string;
  title: string;
  description: string;
  parameters: string[];
  required: string[];
  read_only: boolean;
}

/** Every tool as discovery files list it: name, one-line description, parameter names. */
export function listMcpTools(): McpToolSummary[] {
  return TOOLS.map((t) => {
    const json = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as { properties?: object; required?: string[] };
    return {
      name: t.name,
      title: t.title,
      description: summaryOf(t.description),
      parameters: Object.keys(json.properties ?? {}),
      required: json.required ?? [],
      read_only: t.annotations.readOnlyHint,
    };
  });
}

/** The server's `instructions` (sent at initialize): what it offers and how an agent verifies an answer. */
export const SERVER_INSTRUCTIONS = [
  'Proofline serves verifiable public-record data: the SEC company registry (sec_* tools: identity cards, profiles, timelines, filings, earnings dates, people, signals, search, daily quotes, earnings-call transcripts and facts) and FMCSA motor-carrier vetting (freight_* tools, named as the vetting specification).',
  'Every sec_* answer carries `origin` leaves (and rows carry `origin` or `origin_leaf`): SHA-256 over RFC 8785 JSON of the leaf without leaf_hash, chained through `parent` to the source file. To verify what you cite, call sec_verify with the leaf_hash (or an origin.parent); it walks the chain and returns an Ed25519-signed receipt (keys at /.well-known/proofline-keys.json). Pass the previous receipt nonce as prev_nonce to chain receipts into one audit trail.',
  'All tools read only, except freight_carrier_vet, which creates a signed vetting record and costs 1 credit per call (API key account, or the free account of broker_id). Fields without a value are omitted. Resources: proofline://company/{ticker} (identity card) and proofline://risk-model/rules (how a carrier risk score is made).',
].join('\n\n');
