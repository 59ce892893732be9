/**
 * MCP resources and prompts (issue 23, item 3), chosen for what an agent
 * needs beside the tools:
 *
 * - `proofline://company/{ticker}` (template): the identity card as a
 *   readable document, so a client can attach a company to its context
 *   without a tool call; same body as sec_company (and GET /api/company/{ticker}).
 * - `proofline://risk-model/rules`: the carrier risk model's rule table
 *   (every rule's condition, weight, severity and reason, the level and
 *   recommendation cuts, the model version), so a client can read how a score
 *   is made and explain a red flag line by line.
 * - prompts `verify_company_facts` and `vet_carrier_for_dispatch`: the two
 *   workflows the specifications describe (cite and verify; dispatch rules).
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { LEVEL_CUTS, RECOMMENDATION_CUTS, RISK_MODEL_VERSION, RISK_RULES, type Atom } from '../../ingest/fmcsa/risk-model.ts';
import { getIdentityCard } from '../company/company.queries.ts';
import { readerFor } from '../platform/deps.ts';
import type { ToolContext } from './tool-kit.ts';

const JSON_TYPE = 'application/json';
export const RISK_RULES_URI = 'proofline://risk-model/rules';
const COMPANY_URI = /^proofline:\/\/company\/([^/?#]+)$/;

export const RESOURCES = [
  {
    uri: RISK_RULES_URI,
    name: 'risk-model-rules',
    title: 'Carrier risk model: rule table',
    description:
      'How a carrier risk score is made: every rule (condition, weight, severity, why), the risk-level and recommendation cuts, and the model version stored on each vetting record.',
    mimeType: JSON_TYPE,
  },
];

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'proofline://company/{ticker}',
    name: 'company-identity-card',
    title: 'Company identity card',
    description: 'Identity card of an SEC registrant by ticker or CIK (about 200 tokens), with its origin leaf; same as sec_company.',
    mimeType: JSON_TYPE,
  },
];

function atomText([feature, op, operand]: Atom): string {
  const right =
    typeof operand === 'object' ? (operand.times && operand.times !== 1 ? `${operand.ref} * ${operand.times}` : operand.ref) : operand;
  return `${feature} ${op} ${right}`;
}

/** The rule table as data (the same rows docs/fmcsa-risk-model.md renders). */
export function riskModelDocument() {
  return {
    model_version: RISK_MODEL_VERSION,
    scoring:
      'risk_score = min(100, sum of the weights of the rules that fire); a rule fires when all its conditions hold; a null feature never fires.',
    risk_levels: {
      CRITICAL: `>= ${LEVEL_CUTS.CRITICAL}`,
      HIGH: `>= ${LEVEL_CUTS.HIGH}`,
      MODERATE: `>= ${LEVEL_CUTS.MODERATE}`,
      LOW: 'otherwise',
    },
    recommendation: `REJECT if risk_score >= ${RECOMMENDATION_CUTS.REJECT} or any critical flag; CAUTION if risk_score >= ${RECOMMENDATION_CUTS.CAUTION} or any high flag; else APPROVE`,
    rules: RISK_RULES.map((r) => ({ code: r.code, severity: r.severity, weight: r.weight, when: r.when.map(atomText), why: r.why })),
  };
}

/** Reads one resource, or throws -32002 (resource not found) as the MCP specification asks. */
export async function readResource(ctx: ToolContext, uri: string) {
  if (uri === RISK_RULES_URI) return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(riskModelDocument()) }] };
  const m = COMPANY_URI.exec(uri);
  if (m) {
    const card = await getIdentityCard(readerFor(ctx.deps, 'registry'), ctx.deps.readers.quotes, m[1]!, ctx.deps.options.publicBaseUrl);
    return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(card) }] };
  }
  throw new McpError(-32002, `resource not found: ${uri}`, { uri });
}

export const PROMPTS = [
  {
    name: 'verify_company_facts',
    title: 'Answer about a company, citing and verifying sources',
    description: 'Look a company up, answer from the registry and verify every cited fact with sec_verify (chained receipts).',
    arguments: [
      { name: 'ticker', description: 'ticker or CIK of the company', required: true },
      { name: 'question', description: 'what you want to know about it', required: false },
    ],
  },
  {
    name: 'vet_carrier_for_dispatch',
    title: 'Vet a carrier before dispatch',
    description: 'Vet a carrier (1 credit) and apply the specification’s dispatch rules to the recommendation.',
    arguments: [{ name: 'dot_number', description: 'USDOT number of the carrier', required: true }],
  },
];

export function getPrompt(name: string, args: Record<string, string> = {}) {
  const text = (t: string) => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text: t } }] });
  if (name === 'verify_company_facts') {
    if (!args.ticker) throw new McpError(ErrorCode.InvalidParams, 'argument ticker is required');
    return {
      description: PROMPTS[0]!.description,
      ...text(
        `Using the Proofline tools, ${args.question ? `answer: ${args.question} (about ${args.ticker})` : `summarise ${args.ticker}`}. ` +
          `Start with sec_company {"ticker": "${args.ticker}"}, go deeper with sec_profile, sec_timeline or sec_filings only if needed. ` +
          'For each fact you cite, note its origin leaf_hash (or origin_leaf), call sec_verify with it, passing the previous receipt nonce as prev_nonce, ' +
          'and report the receipts (nonce, receipt_hash) with your answer. Say which facts could not be verified.',
      ),
    };
  }
  if (name === 'vet_carrier_for_dispatch') {
    if (!args.dot_number) throw new McpError(ErrorCode.InvalidParams, 'argument dot_number is required');
    return {
      description: PROMPTS[1]!.description,
      ...text(
        `Call freight_carrier_vet {"dot_number": "${args.dot_number}"} (it costs 1 credit). Dispatch only when recommendation is not REJECT; ` +
          'on REJECT, record the rejection with its red_flags. Either way, store vetting_id and data_hash with the load, ' +
          'and explain each red flag using the rule table at proofline://risk-model/rules.',
      ),
    };
  }
  throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${name}; prompts: ${PROMPTS.map((p) => p.name).join(', ')}`);
}
