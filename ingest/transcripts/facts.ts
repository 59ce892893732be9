/**
 * Facts from transcripts by documented patterns (docs/quotes-and-transcripts.md, "Facts patterns").
 * A fact is one sentence that matches a TYPE pattern and a TOPIC pattern; it
 * keeps the speaker, the section and the sentence as snippet (at most 300
 * characters). Patterns are plain regular expressions so a reviewer can read
 * exactly why a sentence was picked.
 */
import type { FactType, KeyMetric, TranscriptFact, Turn } from './transcript.schema.ts';

/** Topics: a sentence mentions the topic when any pattern matches. */
export const TOPIC_PATTERNS: Record<string, RegExp> = {
  ai: /\b(AI|A\.I\.|artificial intelligence|machine learning|generative|gen ?AI|LLMs?|large language models?|inference|GPUs?|accelerated computing|copilots?|agentic|AI agents?)\b/i,
  blockchain:
    /\b(blockchain|crypto(?:currency|currencies)?|stablecoins?|USDC|bitcoin|ethereum|web3|digital assets?|tokeni[sz]ation|tokeni[sz]ed|on-?chain)\b/i,
  quantum: /\bquantum\b/i,
  cloud: /\b(cloud|Azure|AWS|SaaS|data ?cent(?:er|re)s?)\b/i,
  supply_chain: /\b(supply chain|supply constraints?|component shortages?|logistics|semiconductor shortages?)\b/i,
  capital_return: /\b(share repurchases?|buybacks?|repurchased|dividends?)\b/i,
  tariffs: /\b(tariffs?|trade restrictions?|export controls?)\b/i,
  china: /\b(China|Greater China|Chinese)\b/,
  sustainability: /\b(sustainab\w+|carbon|emissions|net[- ]zero|renewable|climate)\b/i,
};

/** Fact types, in precedence order (a sentence gets the first type that matches). */
export const TYPE_PATTERNS: Array<[FactType, string, RegExp]> = [
  [
    'guidance',
    'forward_looking',
    /\b(we (?:expect|anticipate|project|forecast|guide|see)|(?:our )?outlook|guidance|for the (?:next|coming|fourth|first|second|third|full) (?:quarter|year|fiscal)|looking ahead|next quarter|full[- ]year)\b/i,
  ],
  [
    'metric',
    'number_with_unit',
    /(\$\s?\d[\d,.]*\s?(?:billion|million|thousand|[bmk])?\b|\b\d[\d,.]*\s?(?:%|percent|basis points|bps)|\b\d[\d,.]*\s?(?:billion|million)\b)/i,
  ],
  [
    'strategy',
    'strategic_intent',
    /\b(strateg(?:y|ic)|we(?:'re| are) (?:investing|focused|building|committed|expanding)|we will continue to|priorit(?:y|ies)|roadmap|long[- ]term|launch(?:ed|ing)?|partnership|opportunit(?:y|ies)|platform)\b/i,
  ],
];

/** Splits text into sentences (keeps decimals and abbreviations such as "U.S." mostly intact). */
export function splitSentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+(?=[A-Z"“(])/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function snippet(s: string): string {
  return s.length <= 300 ? s : `${s.slice(0, 297)}...`;
}

/** Facts of every turn: sentence × first matching type × every matching topic. */
export function extractFacts(turns: Turn[], speakerName: (id: string | null) => string | null): TranscriptFact[] {
  const out: TranscriptFact[] = [];
  for (const t of turns) {
    for (const s of splitSentences(t.text)) {
      const type = TYPE_PATTERNS.find(([, , re]) => re.test(s));
      if (!type) continue;
      for (const [topic, re] of Object.entries(TOPIC_PATTERNS)) {
        if (re.test(s))
          out.push({
            type: type[0],
            topic,
            speaker: speakerName(t.speaker),
            section: t.section,
            snippet: snippet(s),
            pattern: `${type[1]}+${topic}`,
          });
      }
    }
  }
  return out;
}

/** Mentions per topic (sentences matching the topic), over all turns. */
export function countTopics(turns: Turn[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of turns)
    for (const s of splitSentences(t.text))
      for (const [topic, re] of Object.entries(TOPIC_PATTERNS)) if (re.test(s)) counts[topic] = (counts[topic] ?? 0) + 1;
  return counts;
}

/** Named financial metrics with a value: "revenue of $123.9 billion", "gross margin was 43.8%". */
const METRIC_RE =
  /\b(revenue|revenues|sales|gross margin|operating margin|operating income|operating expenses|net income|earnings per share|EPS|free cash flow|operating cash flow|cash flow|EBITDA|adjusted EBITDA|data cent(?:er|re) revenue|services revenue|installed base|bookings|backlog|ARR|subscribers|dividend)\b[^.;]{0,80}?(\$\s?\d[\d,.]*\s?(?:billion|million|thousand)?|\d[\d,.]*\s?(?:%|percent)|\d[\d,.]*\s?(?:billion|million))/gi;

/** Key metrics mentioned, first mention of each (metric, value) pair, at most `limit`. */
export function extractKeyMetrics(turns: Turn[], speakerName: (id: string | null) => string | null, limit = 25): KeyMetric[] {
  const seen = new Set<string>();
  const out: KeyMetric[] = [];
  for (const t of turns) {
    for (const s of splitSentences(t.text)) {
      for (const m of s.matchAll(METRIC_RE)) {
        const metric = m[1]
          .toLowerCase()
          .replace(/^revenues$/, 'revenue')
          .replace(/^eps$/, 'earnings per share');
        const value = m[2].replace(/\s+/g, ' ').replace(/[.,]$/, '').trim();
        const k = `${metric}|${value}`;
        if (seen.has(k)) continue;
        seen.add(k);
        out.push({ metric, value, speaker: speakerName(t.speaker), snippet: snippet(s) });
        if (out.length >= limit) return out;
      }
    }
  }
  return out;
}
