import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { detectSignals, evaluateSentence, SIGNAL_PATTERNS, splitSentences, type SignalType } from '../../ingest/edgar/signals.ts';
import { parseTenK, type ParsedTenK } from '../../ingest/edgar/ten-k.ts';

const cache = new Map<string, ParsedTenK>();
function tenK(file: string): ParsedTenK {
  if (!cache.has(file)) cache.set(file, parseTenK(readFileSync(fixture(`sec/filings/10-K/${file}`)), file));
  return cache.get(file)!;
}
const pattern = (t: SignalType) => SIGNAL_PATTERNS.find((p) => p.type === t)!;

/** For each pattern: a real 10-K sentence that is a hit, and one from the same filing that is a near miss, with why. */
const CASES: Array<{ type: SignalType; file: string; item: string; hit: string; strength: number; nearMiss: string; why: RegExp }> = [
  {
    type: 'capex_increase', file: 'nvda-10-k-2025-02-26.html', item: '7',
    hit: 'We expect to increase capital expenditures in fiscal year 2026', strength: 2,
    // Spending is stated, but nothing says it grows.
    nearMiss: 'During fiscal year 2025 and fiscal year 2024, we spent $3.4 billion and $1.1 billion on capital expenditures, respectively.', why: /required wording/,
  },
  {
    type: 'ai_adoption', file: 'nvda-10-k-2025-02-26.html', item: '1A',
    hit: 'We offer enterprise customers NVIDIA DGX Cloud services', strength: 3,
    // AI as a source of reputational risk, not something the company uses or builds.
    nearMiss: 'Issues relating to the responsible use of our technologies, including AI, may result in reputational or financial harm and liability.', why: /required wording/,
  },
  {
    type: 'restructuring', file: 'tsla-10-k-2025-01-30.html', item: '7',
    hit: 'we recognized $583 million of employee termination expenses', strength: 3,
    // A table row naming the line item: no statement about a plan, charge or the company.
    nearMiss: 'Restructuring and other | $ | 684 | $ | — | $ | 176 | $ | 684 | Not meaningful | $ | (176) | (100)%', why: /required wording/,
  },
  {
    type: 'litigation_risk', file: 'aapl-10-k-2024-11-01.html', item: '7',
    hit: 'The Company is subject to various legal proceedings and claims', strength: 2,
    // Item 1A: litigation as a generic cost, without saying the company is party to any.
    nearMiss: 'Regardless of the merit of particular claims, defending against litigation or responding to government investigations can be expensive, time-consuming and disruptive to the Company’s operations.', why: /required wording/,
  },
];

describe.skipIf(!HAS_SHARED)('detectSignals on real 10-K text', () => {
  for (const c of CASES) {
    it(`${c.type}: hit in ${c.file} Item ${c.item}, strength ${c.strength}`, () => {
      const hits = detectSignals(tenK(c.file).sections).filter((h) => h.signal_type === c.type && h.section === `Item ${c.item}`);
      expect(hits).toHaveLength(1);
      expect(hits[0].evidence).toContain(c.hit);
      expect(hits[0].strength).toBe(c.strength);
      expect(hits[0].pattern_id).toBe(pattern(c.type).id);
    });

    it(`${c.type}: near miss in the same filing is not a hit`, () => {
      const t = tenK(c.file);
      const sentences = [...t.sections.values()].flatMap((s) => splitSentences(s.text));
      expect(sentences).toContain(c.nearMiss);
      const v = evaluateSentence(pattern(c.type), c.nearMiss);
      expect(v.verdict).toBe('near_miss');
      expect(v.verdict === 'near_miss' && v.reason).toMatch(c.why);
    });
  }

  it('an exclusion makes a near miss: a capex decrease (CARBO 2017)', () => {
    const s = 'Capital expenditures decreased to $2.2 million in 2017.';
    expect(evaluateSentence(pattern('capex_increase'), s)).toMatchObject({ verdict: 'near_miss', reason: expect.stringContaining('exclusion') });
    const carbo = tenK('crr-10k_20171231.htm');
    expect(detectSignals(carbo.sections).some((h) => h.signal_type === 'capex_increase')).toBe(false);
  });

  it('scores hedged sentences 1 and quantified direct ones 3', () => {
    expect(evaluateSentence(pattern('litigation_risk'), 'We could become subject to lawsuits filed against us.')).toEqual({ verdict: 'hit', strength: 1 });
    const tsla = detectSignals(tenK('tsla-10-k-2025-01-30.html').sections);
    expect(tsla.find((h) => h.signal_type === 'capex_increase')).toMatchObject({ strength: 3, section: 'Item 7' });
  });
});
