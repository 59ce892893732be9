/**
 * Pattern-based signal detectors over 10-K text (Items 1, 1A and 7). One
 * readable table: each pattern names the topic words a sentence must contain,
 * what it must say to count (`require`: the company's own activity), and the
 * near misses (`exclude`, each with the rule it applies). The rules are in
 * docs/signal-labelling-rules.md; `npm run eval` measures the table against a
 * development set labelled from them, and each pattern carries its measured
 * precision and recall (`measured`), which the signal index serves.
 *
 * A sentence is judged in this order (the first that applies decides):
 *   1. no topic word                                   → none
 *   2. a table row or a heading                        → near miss (not a sentence)
 *   3. a pattern exclusion (laws, attackers, debt, …)  → near miss, naming the exclusion
 *   4. negated ("we do not expect", "not a party to")  → near miss
 *   5. hypothetical: a modal or condition (could, may, if, failure to …) and none of the
 *      pattern's statements of fact                    → near miss
 *   6. the required wording missing                    → near miss
 *   7. otherwise a hit.
 *
 * Strength scale (integer, per hit = the strongest sentence of one type in
 * one section of one filing):
 *   1  weak      real but hedged (may, could, might, potential, if) or presupposed by a risk statement
 *   2  moderate  a direct statement about the company's own activity, plan or exposure
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
  /** Statements of fact that survive a modal ("We are, and may in the future become, subject to …"). */
  fact: RegExp | null;
  /** A sentence matching one of these is a near miss, never a hit; `rule` is the reason served with it. */
  exclude: Array<{ rule: string; re: RegExp }>;
  /** Precision and recall measured by `npm run eval` on the development set (per filing, section and type). */
  measured: { precision: number; recall: number; hits: number; as_of: string };
}

/** The company as subject or owner; "our customers" are not the company. */
const SELF = String.raw`\b(?:we|our|us|the company|the company['’]s|its)\b(?!\s+(?:customers|clients|users|partners|suppliers|competitors)\b)`;
const HYPOTHETICAL = /\b(?:could|may|might|would|can)\b|\bif\b|\bin the event\b|\bfailure to\b|\bshould we\b/i;
const NEGATED =
  /\b(?:do|does|did) not (?:expect|anticipate|plan|intend)\b|\bnot (?:currently )?(?:a )?party to\b|\bno (?:material |significant )?(?:pending )?(?:legal proceedings|litigation|restructuring)\b|\bare not a party\b/i;

export const SIGNAL_PATTERNS: readonly SignalPattern[] = [
  {
    type: 'capex_increase',
    id: 'capex-increase-v2',
    description: "the company's own capital expenditures increased, or it plans or expects to increase them",
    sections: ['7', '1'],
    topic:
      /\b(capital expenditures?|capex|capital spending|purchases of property(?:,)? (?:plant )?and equipment|invest(?:ment|ments|ing)? in (?:property|facilities|data cent(?:er|re)s|manufacturing capacity|capacity))\b/i,
    // The increase is said of the capex itself, within a few words.
    require:
      /\b(?:increas(?:e|ed|es|ing)|higher|grew|rose|expand(?:ed|ing)?)\b(?:\s+(?:of|by)\s+(?:approximately\s+)?\$?\s?[\d.,]+\s*(?:million|billion|%)?)?\s+(?:in\s+|our\s+|its\s+)?(?:capital expenditures?|capex|capital spending|purchases of property)|\b(?:capital expenditures?|capex|capital spending)\s+(?:increased|grew|rose|will increase|are expected to increase)\b|\b(?:capital expenditures?|capex|capital spending)\b[^;]{0,120}?\b(?:representing|an?) increase of\b/i,
    fact: null,
    exclude: [
      {
        rule: 'a decrease',
        re: /\b(decreas(?:e|ed|es|ing)|lower|reduc(?:e|ed|tion|ing)|declin(?:e|ed|ing))\b[^.]{0,40}\b(capital expenditures?|capex)\b|\b(capital expenditures?|capex)\b[^.]{0,40}\b(decreas(?:e|ed|es|ing)|lower|reduc(?:e|ed|tion|ing)|declin(?:e|ed|ing))\b/i,
      },
      {
        rule: 'regulation that may require capital expenditures',
        re: /\b(?:regulations?|standards|policies|laws?)\b[^.]*\brequire\b[^.]*capital expenditures/i,
      },
      { rule: 'a share of capital expenditures, not growth', re: /\ballocation of capital expenditures\b/i },
    ],
    measured: { precision: 1, recall: 1, hits: 1, as_of: '2026-11-25' },
  },
  {
    type: 'ai_adoption',
    id: 'ai-adoption-v2',
    description: 'the company uses, builds, deploys, sells or invests in AI',
    sections: ['1', '1A', '7'],
    topic:
      /\b(artificial intelligence|machine learning|generative AI|GenAI|AI|AI\/ML|large language models?|LLMs?|agentic|generative models?|foundation models?)\b/,
    // The company as the subject of a verb of using or building, or AI it names as its own ("our AI offerings",
    // "Our AI-powered Salesforce Platform").
    require: new RegExp(
      String.raw`${SELF}[^.]{0,100}\b(?:use|uses|using|used|deploy(?:s|ed|ing)?|integrat(?:e|es|ed|ing)|adopt(?:s|ed|ing)?|invest(?:s|ed|ing)?|develop(?:s|ed|ing)?|incorporat(?:e|es|ed|ing)|leverag(?:e|es|ed|ing)|launch(?:es|ed)?|offer(?:s|ed|ing)?|build(?:s|ing)?|built|introduc(?:e|es|ed|ing)|embed(?:s|ded|ding)?|infus(?:e|es|ed|ing)|releas(?:e|es|ed)|provid(?:e|es|ed|ing)|power(?:s|ed)?|appl(?:y|ies|ied)|acquir(?:e|es|ed)|train(?:s|ed)?|rel(?:y|ies) on|implement(?:s|ed|ing)?|add(?:s|ed|ing)?|bring(?:s)?|enabl(?:e|es|ing))\b|\b(?:our|its)\s+(?:[\w-]+\s+){0,3}(?:AI|artificial intelligence|machine learning|generative AI|AI\/ML)\b|\b(?:our|its)\s+(?:[\w-]+\s+){0,2}AI-(?:powered|based|driven|first|enabled)\b|\b(?:AI|artificial intelligence|generative AI)\b[^.]{0,40}\bin our (?:offerings|products|services|platforms?|solutions)\b`,
      'i',
    ),
    fact: null,
    exclude: [
      {
        rule: 'AI named only as a tool of attackers',
        re: /\b(?:threat actors?|bad actors?|malicious actors?|attackers?|hackers?|fraudsters?|criminals?|cyber-?criminals?)\b/i,
      },
      {
        rule: 'laws or regulation about AI',
        re: /\b(?:laws?|regulations?|regulators?|regulatory|legislation|legislative|legislatures?|AI Act|legal frameworks?|legal standards)\b/i,
      },
      {
        rule: 'AI of competitors or others',
        re: /\b(?:competitors?|other companies|third parties)\b[^.]{0,60}\b(?:incorporate|use|develop|offer|adopt)\b|\b(?:face|expect to face)\b[^.]{0,40}\bcompetition\b|\bcompanies offering\b|\bcompete with our\b/i,
      },
      { rule: 'investing in other companies', re: /\binvest in companies\b/i },
      { rule: 'conditional own use', re: /\b(?:if|should|whether) we (?:use|adopt|deploy|develop)\b/i },
    ],
    measured: { precision: 1, recall: 0.929, hits: 13, as_of: '2026-11-25' },
  },
  {
    type: 'restructuring',
    id: 'restructuring-v2',
    description: "the company's own restructuring plans, workforce reductions, exit or disposal costs",
    sections: ['7', '1', '1A'],
    topic:
      /\b(restructur(?:e|ed|ing)|workforce reductions?|reductions? in (?:force|workforce)|layoffs?|headcount reductions?|exit (?:or|and) disposal)\b/i,
    // The company (or "the program") with a plan, action, charge or cost; or restructuring charges in its own results.
    require: new RegExp(
      String.raw`\b(?:restructuring|reorganization)\b[^.]{0,30}\bcharges\b|\bcharges\b[^.]{0,160}\brestructuring\b|(?:${SELF}|\bthe program\b)[^.]{0,160}\b(?:plans?|programs?|initiatives?|actions?|charges?|costs?|accruals?|activities|announced|initiated|implemented|recorded|recognized|incurred|completed|started|committed|restructured|reduction)\b|\b(?:plans?|programs?|initiatives?|actions?|charges?|costs?|accruals?|activities)\b[^.]{0,160}${SELF}`,
      'i',
    ),
    fact: /\b(?:we|the company)\s+(?:have|has|had)?\s*(?:announced|initiated|implemented|recorded|recognized|incurred|completed|started|committed)\b|\bour restructuring (?:actions|plan|program|initiatives)\b/i,
    exclude: [
      {
        rule: 'debt, loans or receivables',
        re: /\b(debt|loans?|lease|receivables?|indebtedness)\s+restructur|restructur\w*\s+(?:of\s+)?(?:our\s+|its\s+)?(?:debt|loans?|indebtedness|receivables?)|troubled debt|restructured (?:loans?|cardmember|receivables)/i,
      },
      { rule: 'restructurings of others (bankruptcies, consolidations, an industry)', re: /\b(?:bankruptc(?:y|ies)|consolidations)\b/i },
      {
        rule: 'restructuring named only as an acquisition cost',
        re: /\b(?:acquisitions?|acquired (?:entities|businesses)|integration|purchase of)\b[^.]{0,120}\brestructuring\b|\brestructuring\b[^.]{0,100}\b(?:acquired entities|integration of acquired)\b/i,
      },
      {
        rule: 'restructuring of something else (systems, relationships)',
        re: /\brestructuring (?:support systems|business relationships|(?:of )?(?:our )?(?:processes|systems|relationships|agreements|contracts))\b/i,
      },
      {
        rule: 'a definition, an accounting policy or a non-GAAP adjustment',
        re: /^restructuring (?:consists|excludes|includes)\b|\bexclud(?:e|es|ing)\b[^.]{0,60}\brestructuring\b|\bconsistent with our (?:historical )?polic(?:y|ies)\b|\badjustment to core\b/i,
      },
    ],
    measured: { precision: 1, recall: 1, hits: 5, as_of: '2026-11-25' },
  },
  {
    type: 'litigation_risk',
    id: 'litigation-risk-v2',
    description: 'the company is, or has been, party to litigation, lawsuits or government investigations',
    sections: ['1A', '7', '1'],
    topic:
      /\b(litigation|lawsuits?|legal proceedings|class actions?|legal actions?|legal claims|investigations?|enforcement actions?|subpoenas?|defendants?|civil investigative demand|consent decree)\b/i,
    require: new RegExp(
      String.raw`${SELF}[^.]{0,40}\b(?:are|is|were|was|have been|has been|remain|continue to be|had been)\b(?:,)?(?:\s+(?:currently|routinely|also|now|from time to time))?[^.]{0,40}\b(?:defendants?|party|parties|subject to (?:(?:various|numerous|a number of|ongoing|pending|certain|a variety of)\s+)?(?:private party and governmental |governmental |legal )?(?:claims|litigation|lawsuits|legal proceedings|legal actions|investigations|inquiries|audits|allegations|class)|involved in|named|sued|responding to|cooperating with)\b|\b(?:filed|brought|pending|asserted)\s+(?:a\s+)?(?:lawsuits?|suits?|complaints?|actions?)?\s*against\s+(?:us|the company|[A-Z]\w+)\b|\b(?:lawsuits?|litigation|legal proceedings|claims|actions)\b[^.]{0,100}\b(?:are|is|remain) pending\b|\bpending (?:lawsuits|litigation|legal proceedings)\b|\b(?:our|its) (?:legal proceedings|litigation (?:provision|escrow)|pending litigation)\b|\blitigation (?:provision|escrow account|matters?)\b|\b(?:recorded|accru\w+|deposit\w*)\b[^.]{0,120}\blitigation\b|\bwe (?:have )?(?:not )?prevailed\b|\b(?:ongoing|outstanding|covered|active|existing) (?:securities )?(?:class action )?(?:litigation|legal proceedings|lawsuits)\b|\b(?:legal proceedings|legal actions|lawsuits|litigation|matters) (?:to which (?:we|the company) (?:are|is) (?:a )?party|in which (?:we|the company) (?:are|is) involved)\b|\bwe (?:have been|were) (?:sued|named)\b`,
      'i',
    ),
    fact: /\b(?:we|the company|(?:the )?[A-Z][\w.]* (?:Corporation|Inc\.?|Company))\s+(?:are|is|have been|has been)\b(?:,)?(?:\s+(?:currently|routinely|also))?\b[^.]{0,40}\b(?:defendants?|party|subject|involved|named)\b|\b(?:have|has) been,? and (?:in the future )?may\b|\bhave not prevailed\b|\bin some cases have\b|\bhave (?:been )?(?:resulted|exposed)\b|\bpending\b|\bcurrently\b|\bongoing\b/i,
    exclude: [
      {
        rule: 'a list of the laws the company is subject to',
        re: /\b(?:laws|regulations)\b[^.]{0,40}\b(?:relating|related|regarding|governing|including|such as)\b[^.]{0,200}\b(?:antitrust|investigations?)\b/i,
      },
      {
        rule: 'litigation of competitors or others',
        re: /\b(?:competitors|other companies|other businesses|suppliers)\b[^.]{0,60}\b(?:named|defendants?|lawsuits?|litigation|involved)\b|\bagainst (?:visa|mastercard|our competitors)\b/i,
      },
      {
        rule: 'another meaning of the words',
        re: /Private Securities Litigation Reform Act|Federal Bureau of Investigation|\binvestigation,? (?:and )?remediation\b|\bdue diligence investigation\b|\bour investigation of\b|\binvestigation into a cybersecurity incident\b|\bconduct an investigation and respond\b/i,
      },
    ],
    measured: { precision: 1, recall: 0.789, hits: 15, as_of: '2026-11-25' },
  },
];

export type SentenceVerdict = { verdict: 'hit'; strength: 1 | 2 } | { verdict: 'near_miss'; reason: string } | { verdict: 'none' };

const HEDGE = /\b(may|could|might|potential(?:ly)?|if)\b/i;
const QUANT = /\$\s?\d[\d,.]*\s*(?:million|billion|thousand)?|\b\d+(?:\.\d+)?\s?%|\b\d{1,3}(?:,\d{3})+\b|\bpercent\b/i;

/** A table row (cells joined with `|`) or a heading (no verb-like word, short, or in capitals). */
function notASentence(s: string): string | null {
  if (s.includes('|')) return 'a table row, not a sentence';
  if (/^[a-z(]/.test(s)) return 'a list item, not a sentence';
  const words = s.split(/\s+/);
  if (words.length <= 4) return 'a heading, not a sentence';
  if (!/[a-z]/.test(s)) return 'a heading in capitals, not a sentence';
  if (words.length <= 8 && !/[.!?;:]$/.test(s)) return 'a heading, not a sentence';
  return null;
}

/** The topic word as one element of a comma list of topics ("investigation and settlement costs, litigation, …"). */
function namedInList(p: SignalPattern, s: string): boolean {
  if ((s.match(/,/g) ?? []).length < 3) return false;
  const t = new RegExp(
    String.raw`(?:,|\band|\bor)\s+(?:[\w-]+\s+){0,2}(?:${p.topic.source})(?:\s+[\w-]+){0,2}\s*(?:,|;|\band\b|\bor\b)`,
    'i',
  );
  return t.test(s);
}

/**
 * Words that name the company itself, from its registrant name ("ADOBE INC." → "Adobe"; "Home Depot"): in a
 * sentence they count as "the company" ("Adobe Firefly is …", "Visa has invested …"). Generic first words
 * ("Union", "American", "United", …) only count with the rest of the name.
 */
export function companyAliases(name: string | null | undefined): string[] {
  if (!name) return [];
  const clean = name
    .replace(/&amp;/g, '&')
    .replace(/\/[A-Z]+\/?/g, ' ')
    .replace(/[,.]/g, ' ')
    .replace(/\b(?:inc|incorporated|corp|corporation|co|company|group|holdings?|ltd|plc|l\s?p|llc|n\s?v|s\s?a|new)\b/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (clean.length < 3) return [];
  const first = clean.split(' ')[0];
  const generic =
    /^(?:the|union|american|united|general|national|international|first|home|progressive|wells|bank|global|premier|commonwealth|renewable|energy)$/i;
  return [...new Set([clean, ...(first.length >= 4 && !generic.test(first) ? [first] : [])])];
}

function withCompanyAsSelf(sentence: string, aliases: readonly string[]): string {
  let out = sentence;
  for (const a of aliases) {
    const re = new RegExp(String.raw`\b${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+')}(['’]s)?\b`, 'gi');
    out = out.replace(re, (m: string, poss: string | undefined) => (/^[A-Z]/.test(m) ? `the company${poss ? "'s" : ''}` : m));
  }
  return out;
}

/**
 * Classifies one sentence against one pattern (exported for tests and the README table). `company`: the
 * registrant's name, whose words count as "the company" for the required wording.
 */
export function evaluateSentence(p: SignalPattern, raw: string, company: readonly string[] = []): SentenceVerdict {
  if (!p.topic.test(raw)) return { verdict: 'none' };
  const notSentence = notASentence(raw);
  if (notSentence) return { verdict: 'near_miss', reason: notSentence };
  const sentence = withCompanyAsSelf(raw, company);
  // A topic word listed among others ("investigation and settlement costs, litigation, …, restructuring") is not
  // a statement about it, unless the sentence states the fact ("We are involved in …, including …, litigation").
  if (p.type !== 'ai_adoption' && p.type !== 'capex_increase' && namedInList(p, sentence) && !p.fact?.test(sentence))
    return { verdict: 'near_miss', reason: 'named only in a list of topics' };
  const ex = p.exclude.find((e) => e.re.test(sentence));
  if (ex) return { verdict: 'near_miss', reason: `matches the exclusion: ${ex.rule}` };
  if (NEGATED.test(sentence)) return { verdict: 'near_miss', reason: 'negated' };
  const hypothetical = HYPOTHETICAL.test(sentence);
  // AI: the modal is about consequences of the company's own AI ("Issues relating to AI in our offerings may
  // result in …"), so it weakens the hit instead of making it hypothetical (rules §1.4).
  if (hypothetical && p.type !== 'ai_adoption' && !(p.fact?.test(sentence) && p.require.test(sentence))) {
    return { verdict: 'near_miss', reason: 'hypothetical: a modal or condition without a statement of fact' };
  }
  if (!p.require.test(sentence))
    return { verdict: 'near_miss', reason: `topic without the required wording ${p.require.source.slice(0, 60)}…` };
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
    // Sentence ends, and a period followed directly by a capitalised word ("in 2023.We continue").
    for (const s of line.split(/(?<=[.!?])\s+(?=[A-Z•])|(?<=[a-z0-9]{2}\.)(?=[A-Z][a-z])/)) {
      const t = s.replace(/^[•·\-\s]+/, '').trim();
      if (t.length >= 25) out.push(t);
    }
  }
  return out;
}

/** Runs every pattern over the given sections (`item → text`); one hit per type and section, the strongest. */
export function detectSignals(sections: ReadonlyMap<string, { text: string }>, opts: { company?: string | null } = {}): SignalHit[] {
  const hits: SignalHit[] = [];
  const aliases = companyAliases(opts.company);
  for (const p of SIGNAL_PATTERNS) {
    for (const item of p.sections) {
      const sec = sections.get(item);
      if (!sec) continue;
      let best: { sentence: string; strength: number } | null = null;
      let count = 0;
      let direct = 0;
      for (const s of splitSentences(sec.text)) {
        const v = evaluateSentence(p, s, aliases);
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
