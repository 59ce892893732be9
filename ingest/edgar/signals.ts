/**
 * Pattern-based signal detectors over 10-K text (Item 1A Risk Factors and
 * Item 7 MD&A). One readable table: each pattern names the topic words a
 * sentence must contain, what else it must say to count (`require`), and what
 * turns it into a near miss (`exclude`).
 *
 * Strength scale (integer, per hit = the strongest sentence of one type in
 * one section of one filing):
 *   1  weak      the sentence is hedged (may, could, might, potential, if)
 *   2  moderate  a direct statement about the company's own activity or exposure
 *   3  strong    a direct statement that is quantified ($ amount or %), or
 *                a moderate statement repeated in ≥ 3 sentences of the section
 */

export type SignalType = 'capex_increase' | 'ai_adoption' | 'restructuring' | 'litigation_risk';

export interface SignalPattern {
  type: SignalType;
  /** Stable id, stored with every hit. */
  id: string;
  description: string;
  /** 10-K items searched. */
  sections: string[];
  topic: RegExp;
  require: RegExp;
  /** A sentence matching this is a near miss, never a hit. */
  exclude: RegExp | null;
}

const SELF = String.raw`\b(?:we|our|us|the company)\b`;

export const SIGNAL_PATTERNS: readonly SignalPattern[] = [
  {
    type: 'capex_increase', id: 'capex-increase-v1',
    description: 'capital expenditures or capacity investment said to increase',
    sections: ['7', '1A'],
    topic: /\b(capital expenditures?|capex|purchases of property(?:,)? (?:plant )?and equipment|invest(?:ment|ments|ing)? in (?:property|facilities|data cent(?:er|re)s|infrastructure|manufacturing capacity|capacity))\b/i,
    require: /\b(increas(?:e|ed|es|ing)|higher|expand(?:ed|ing)?|grow(?:th)?|ramp(?:ing)?|significant(?:ly)? invest)/i,
    exclude: /\b(decreas(?:e|ed|es|ing)|lower|reduc(?:e|ed|tion|ing)|declin(?:e|ed|ing))\b[^.]{0,40}\b(capital expenditures?|capex)\b|\b(capital expenditures?|capex)\b[^.]{0,40}\b(decreas(?:e|ed|es|ing)|lower|reduc(?:e|ed|tion|ing)|declin(?:e|ed|ing))\b/i,
  },
  {
    type: 'ai_adoption', id: 'ai-adoption-v1',
    description: 'the company uses, builds, deploys or invests in AI',
    sections: ['1A', '7'],
    topic: /\b(artificial intelligence|machine learning|generative AI|AI|large language models?|LLMs?)\b/,
    require: new RegExp(String.raw`${SELF}[^.]{0,100}\b(use|uses|using|deploy(?:s|ed|ing)?|integrat(?:e|es|ed|ing)|adopt(?:s|ed|ing)?|invest(?:s|ed|ing)?|develop(?:s|ed|ing)?|incorporat(?:e|es|ed|ing)|leverag(?:e|es|ed|ing)|launch(?:es|ed)?|offer(?:s|ed|ing)?|build(?:s|ing)?)\b`, 'i'),
    exclude: /\b(regulat(?:ion|ions|ory|ed)|legislat(?:ion|ive)|laws?)\b/i,
  },
  {
    type: 'restructuring', id: 'restructuring-v1',
    description: 'restructuring plans, workforce reductions, exit or disposal costs',
    sections: ['7', '1A'],
    topic: /\b(restructur(?:e|ed|ing)|workforce reductions?|reductions? in (?:force|workforce)|layoffs?|headcount reductions?|exit (?:or|and) disposal)\b/i,
    require: new RegExp(String.raw`${SELF}|\b(plan|charges?|costs?|initiated|announced|implemented|recorded|incurred|completed)\b`, 'i'),
    exclude: /\b(debt|loan|lease) restructur|restructuring of (?:our |its )?(?:debt|loans|indebtedness)|troubled debt/i,
  },
  {
    type: 'litigation_risk', id: 'litigation-risk-v1',
    description: 'the company is, or expects to be, party to material litigation or investigations',
    sections: ['1A', '7'],
    topic: /\b(litigation|lawsuits?|legal proceedings|class actions?|antitrust|investigations?|legal claims)\b/i,
    require: /\b(subject to|party to|defendant|named in|filed against|pending|involved in|fac(?:e|es|ing)|brought against|adverse (?:outcome|judgment|ruling))\b/i,
    exclude: /\bnot (?:currently )?(?:a )?party to any (?:material )?(?:pending )?(?:legal )?proceedings|\bno material (?:pending )?(?:legal )?proceedings/i,
  },
];

export type SentenceVerdict = { verdict: 'hit'; strength: 1 | 2 } | { verdict: 'near_miss'; reason: string } | { verdict: 'none' };

const HEDGE = /\b(may|could|might|potential(?:ly)?|if)\b/i;
const QUANT = /\$\s?\d[\d,.]*\s*(?:million|billion|thousand)?|\b\d+(?:\.\d+)?\s?%/i;

/** Classifies one sentence against one pattern (exported for tests and the table in docs/registry.md). */
export function evaluateSentence(p: SignalPattern, sentence: string): SentenceVerdict {
  if (!p.topic.test(sentence)) return { verdict: 'none' };
  if (p.exclude?.test(sentence)) return { verdict: 'near_miss', reason: `matches the exclusion ${p.exclude.source.slice(0, 60)}…` };
  if (!p.require.test(sentence)) return { verdict: 'near_miss', reason: `topic without the required wording ${p.require.source.slice(0, 60)}…` };
  return { verdict: 'hit', strength: HEDGE.test(sentence) ? 1 : 2 };
}

export interface SignalHit {
  signal_type: SignalType;
  pattern_id: string;
  strength: number;
  section: string;
  evidence: string;
  /** Sentences of the section that matched. */
  sentence_count: number;
}

/** Splits text into sentences (lines first, then sentence ends). */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    for (const s of line.split(/(?<=[.!?])\s+(?=[A-Z•])/)) {
      const t = s.replace(/^[•·\-\s]+/, '').trim();
      if (t.length >= 25) out.push(t);
    }
  }
  return out;
}

/** Runs every pattern over the given sections (`item → text`); one hit per type and section, the strongest. */
export function detectSignals(sections: ReadonlyMap<string, { text: string }>): SignalHit[] {
  const hits: SignalHit[] = [];
  for (const p of SIGNAL_PATTERNS) {
    for (const item of p.sections) {
      const sec = sections.get(item);
      if (!sec) continue;
      let best: { sentence: string; strength: number } | null = null;
      let count = 0;
      let direct = 0;
      for (const s of splitSentences(sec.text)) {
        const v = evaluateSentence(p, s);
        if (v.verdict !== 'hit') continue;
        count++;
        let strength: number = v.strength;
        if (strength === 2) direct++;
        if (strength === 2 && QUANT.test(s)) strength = 3;
        if (!best || strength > best.strength) best = { sentence: s, strength };
      }
      if (!best) continue;
      const strength = best.strength === 2 && direct >= 3 ? 3 : best.strength;
      const evidence = snippet(best.sentence, p.topic);
      hits.push({ signal_type: p.type, pattern_id: p.id, strength, section: `Item ${item}`, evidence, sentence_count: count });
    }
  }
  return hits;
}

/** The sentence, or a ≤ 280-char window of it centred on the topic words. */
function snippet(sentence: string, topic: RegExp): string {
  if (sentence.length <= 280) return sentence;
  const at = sentence.search(topic);
  const start = Math.max(0, Math.min(at - 120, sentence.length - 274));
  return `${start > 0 ? '...' : ''}${sentence.slice(start, start + 274).trim()}...`;
}
