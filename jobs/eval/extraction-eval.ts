/**
 * Extraction evaluation: runs the registry's own document parsers over the
 * real filings corpus (`../shared/fixtures/sec/corpus`) and scores them
 * against the committed development-set labels (`test/eval/labels/`, written
 * from `docs/signal-labelling-rules.md`).
 *
 * Code path: every file goes through `pathHints` → `classifyDocument` →
 * `parseEightK` / `parseTenK` → `detectSignals`, with the same hints the
 * registry's `extractDocument` (jobs/registry/registry-layers.steps.ts) passes;
 * 8-K items of one filing are joined over its documents as the timeline joins
 * them (by filing and item, 9.01 dropped by `isTimelineItem`).
 *
 * Scoring (the rules, §1.1): a served signal (one per filing, section, type) is
 * right when its evidence sentence is labelled a hit of that type; a labelled
 * (filing, section, type) is missed when nothing is served for it. 8-K events
 * score per (filing, item, event type); employees per 10-K (exact value);
 * executive officers per name. Pure: reads files, returns numbers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { classifyDocument, pathHints } from '../../ingest/edgar/documents.ts';
import { EIGHT_K_ITEMS, isTimelineItem, parseEightK } from '../../ingest/edgar/eight-k.ts';
import { companyAliases, detectSignals, evaluateSentence, SIGNAL_PATTERNS, type SignalHit } from '../../ingest/edgar/signals.ts';
import { parseTenK, type ParsedTenK } from '../../ingest/edgar/ten-k.ts';

export interface SignalLabel {
  file: string;
  section: string;
  signal_type: string;
  label: 'hit' | 'near_miss';
  strength?: number;
  sentence: string;
}
export interface EightKLabel {
  folder: string;
  items: string[];
  product_launch: string | null;
  note?: string;
}
export interface ProfileLabel {
  file: string;
  employees: number | null;
  executive_officers: string[];
}

export interface Labels {
  signals: { sections_read: Array<{ file: string; section: string }>; sentences: SignalLabel[] };
  eightK: { filings: EightKLabel[] };
  profile: { filings: ProfileLabel[] };
}

export interface Score {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}
export interface Finding {
  kind: 'false_hit' | 'miss' | 'unjudged_hit';
  file: string;
  section?: string;
  what: string;
  sentence?: string;
  detail?: string;
}

export interface EvalResult {
  corpus: string;
  signals: Record<string, Score & { strength_agreement: number | null }>;
  /** Every labelled sentence of a searched section judged alone (informational: what is served is per section). */
  signal_sentences: Record<string, Score>;
  events: Record<string, Score> & { all: Score };
  product_launch: Score;
  profile: { employees: Score; executive_officers: Score };
  findings: Finding[];
  counts: { ten_k: number; eight_k_filings: number; signal_sentences: number; signal_hit_sentences: number };
}

const LABEL_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'test', 'eval', 'labels');

/** Reads the committed labels. */
export function loadLabels(dir = LABEL_DIR): Labels {
  const read = (f: string) => JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
  return { signals: read('signals.json'), eightK: read('eight-k.json'), profile: read('profile.json') };
}

function score(tp: number, fp: number, fn: number): Score {
  // With nothing predicted, precision is vacuously 1; with nothing to find, recall is 1.
  return { tp, fp, fn, precision: tp + fp === 0 ? 1 : round(tp / (tp + fp)), recall: tp + fn === 0 ? 1 : round(tp / (tp + fn)) };
}
const round = (x: number) => Math.round(x * 1000) / 1000;

/** Lower-case, quotes unified, whitespace collapsed, trailing ellipses of an evidence window dropped. */
export function normSentence(s: string): string {
  return s
    .replace(/^\.\.\.|\.\.\.$/g, '')
    .replace(/[“”]/g, '"')
    .replace(/[‘’]/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** Person-name key: letters only, lower-case, single spaces ("McPHAIL" = "McPhail", "Jr." kept as "jr"). */
export function normName(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[^A-Za-z ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * The label of an evidence sentence: the labelled sentence that contains the evidence (a ≤ 280-char window of
 * it), else one the evidence contains that makes up most of it (the parser split differently); a heading or
 * fragment inside a longer evidence sentence is not its label.
 */
export function matchLabel<T extends { sentence: string }>(labelled: T[], evidence: string): T | undefined {
  const ev = normSentence(evidence);
  return (
    labelled.find((l) => normSentence(l.sentence).includes(ev)) ??
    labelled.find((l) => {
      const s = normSentence(l.sentence);
      return ev.includes(s) && s.length >= 0.6 * ev.length;
    })
  );
}

interface Parsed {
  tenK: Map<string, ParsedTenK>;
  eightK: Map<string, Array<{ item: string; event_type: string; product_launch: string | null }>>;
}

/** Parses every labelled corpus file through the registry's routing; parse failures become findings. */
function parseCorpus(corpus: string, labels: Labels, findings: Finding[]): Parsed {
  const tenK = new Map<string, ParsedTenK>();
  const eightK = new Map<string, Array<{ item: string; event_type: string; product_launch: string | null }>>();
  const files = new Set<string>([...labels.profile.filings.map((f) => f.file), ...labels.signals.sections_read.map((s) => s.file)]);
  for (const rel of files) {
    const text = readFileSync(path.join(corpus, rel), 'utf8');
    const hints = pathHints(rel);
    const { kind } = classifyDocument(text);
    try {
      if (kind !== '10-K') throw new Error(`classified as ${kind}`);
      tenK.set(rel, parseTenK(text, rel, { cik: hints.cik, accession: hints.accession }));
    } catch (e) {
      findings.push({ kind: 'miss', file: rel, what: '10-K not parsed', detail: (e as Error).message });
    }
  }
  for (const f of labels.eightK.filings) {
    const dir = path.join(corpus, f.folder);
    const rows: Array<{ item: string; event_type: string; product_launch: string | null }> = [];
    for (const name of readDirFiles(dir)) {
      const rel = path.join(f.folder, name);
      const text = readFileSync(path.join(corpus, rel), 'utf8');
      const hints = pathHints(rel);
      if (classifyDocument(text).kind !== '8-K') continue;
      try {
        const k = parseEightK(text, rel, { cik: hints.cik, accession: hints.accession, filing_date: hints.date });
        for (const it of k.items) {
          if (!isTimelineItem(it.item)) continue;
          const prev = rows.find((r) => r.item === it.item);
          if (prev) prev.product_launch ??= it.product_launch?.evidence ?? null;
          else rows.push({ item: it.item, event_type: it.event_type, product_launch: it.product_launch?.evidence ?? null });
        }
      } catch (e) {
        findings.push({ kind: 'miss', file: rel, what: '8-K not parsed', detail: (e as Error).message });
      }
    }
    eightK.set(f.folder, rows);
  }
  return { tenK, eightK };
}

/** The documents of one filing folder (one to three: primary document, complete submission). */
function readDirFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => !n.endsWith('.meta.json'))
    .sort();
}

/** Scores signals, events, launches and profile facts. */
export function evaluateExtraction(corpus: string, labels: Labels = loadLabels()): EvalResult {
  const findings: Finding[] = [];
  const parsed = parseCorpus(corpus, labels, findings);

  // --- signals
  const read = new Set(labels.signals.sections_read.map((s) => `${s.file}|${s.section}`));
  const byGroup = new Map<string, SignalLabel[]>();
  for (const l of labels.signals.sentences) {
    const k = `${l.file}|${l.section}|${l.signal_type}`;
    byGroup.set(k, [...(byGroup.get(k) ?? []), l]);
  }
  const types = [...new Set(labels.signals.sentences.map((l) => l.signal_type))].sort();
  const served = new Map<string, SignalHit>();
  for (const [file, t] of parsed.tenK) {
    for (const h of detectSignals(t.sections, { company: t.company_name })) {
      const section = h.section.replace(/^Item /, '');
      if (read.has(`${file}|${section}`)) served.set(`${file}|${section}|${h.signal_type}`, h);
    }
  }
  const signals: EvalResult['signals'] = {};
  for (const type of types) {
    let tp = 0,
      fp = 0,
      fn = 0,
      agree = 0;
    const groups = new Set([...byGroup.keys()].filter((k) => k.endsWith(`|${type}`)));
    for (const k of served.keys()) if (k.endsWith(`|${type}`)) groups.add(k);
    for (const k of [...groups].sort()) {
      const [file, section] = k.split('|');
      const labelled = byGroup.get(k) ?? [];
      const hasHit = labelled.some((l) => l.label === 'hit');
      const h = served.get(k);
      if (h) {
        const match = matchLabel(labelled, h.evidence);
        if (match?.label === 'hit') {
          tp++;
          if (match.strength === h.strength) agree++;
        } else {
          fp++;
          if (hasHit) fn++;
          findings.push({
            kind: match ? 'false_hit' : 'unjudged_hit',
            file,
            section,
            what: `${type} strength ${h.strength}`,
            sentence: h.evidence,
            detail: match ? 'labelled near miss' : 'sentence not in the labels',
          });
        }
      } else if (hasHit) {
        fn++;
        const best = [...labelled].filter((l) => l.label === 'hit').sort((a, b) => (b.strength ?? 0) - (a.strength ?? 0))[0];
        findings.push({
          kind: 'miss',
          file,
          section,
          what: type,
          sentence: best.sentence,
          detail: `${labelled.filter((l) => l.label === 'hit').length} labelled hit sentence(s)`,
        });
      }
    }
    signals[type] = { ...score(tp, fp, fn), strength_agreement: tp ? round(agree / tp) : null };
  }

  const signal_sentences: EvalResult['signal_sentences'] = {};
  for (const type of types) {
    const p = SIGNAL_PATTERNS.find((x) => x.type === type);
    let tp = 0,
      fp = 0,
      fn = 0;
    for (const l of labels.signals.sentences) {
      if (l.signal_type !== type || !p?.sections.includes(l.section)) continue;
      const hit = evaluateSentence(p, l.sentence, companyAliases(parsed.tenK.get(l.file)?.company_name)).verdict === 'hit';
      if (hit && l.label === 'hit') tp++;
      else if (hit) fp++;
      else if (l.label === 'hit') fn++;
    }
    signal_sentences[type] = score(tp, fp, fn);
  }

  // --- 8-K events and product launches
  const ev: Record<string, { tp: number; fp: number; fn: number }> = {};
  const bump = (t: string, k: 'tp' | 'fp' | 'fn') => {
    (ev[t] ??= { tp: 0, fp: 0, fn: 0 })[k]++;
  };
  let lTp = 0,
    lFp = 0,
    lFn = 0;
  for (const f of labels.eightK.filings) {
    const got = parsed.eightK.get(f.folder) ?? [];
    // A labelled launch makes its 7.01/8.01 item a `product_launch` event (rules §2).
    const wantType = (item: string) =>
      f.product_launch && (item === '7.01' || item === '8.01') ? 'product_launch' : (EIGHT_K_ITEMS[item]?.event ?? 'other_event');
    for (const item of f.items) {
      const want = wantType(item);
      const g = got.find((r) => r.item === item);
      if (g && g.event_type === want) bump(want, 'tp');
      else {
        bump(want, 'fn');
        findings.push({
          kind: 'miss',
          file: f.folder,
          what: `8-K item ${item} (${want})`,
          detail: g ? `served as ${g.event_type}` : 'not found',
        });
      }
    }
    for (const g of got) {
      if (f.items.includes(g.item) && g.event_type === wantType(g.item)) continue;
      bump(g.event_type, 'fp');
      findings.push({
        kind: 'false_hit',
        file: f.folder,
        what: `8-K item ${g.item} (${g.event_type})`,
        detail: 'not an event of this filing by the labels',
      });
    }
    const launch = got.find((g) => g.product_launch)?.product_launch ?? null;
    if (launch && f.product_launch) lTp++;
    else if (launch) {
      lFp++;
      findings.push({ kind: 'false_hit', file: f.folder, what: 'product launch', sentence: launch });
    } else if (f.product_launch) {
      lFn++;
      findings.push({ kind: 'miss', file: f.folder, what: 'product launch', sentence: f.product_launch });
    }
  }
  const events = Object.fromEntries(
    Object.entries(ev)
      .sort()
      .map(([k, v]) => [k, score(v.tp, v.fp, v.fn)]),
  ) as EvalResult['events'];
  const tot = Object.values(ev).reduce((a, v) => ({ tp: a.tp + v.tp, fp: a.fp + v.fp, fn: a.fn + v.fn }), { tp: 0, fp: 0, fn: 0 });
  events.all = score(tot.tp, tot.fp, tot.fn);

  // --- profile facts
  let eTp = 0,
    eFp = 0,
    eFn = 0,
    oTp = 0,
    oFp = 0,
    oFn = 0;
  for (const p of labels.profile.filings) {
    const t = parsed.tenK.get(p.file);
    const got = t?.employees?.value ?? null;
    if (got !== null && got === p.employees) eTp++;
    else {
      if (got !== null) {
        eFp++;
        findings.push({
          kind: 'false_hit',
          file: p.file,
          what: `employees ${got}`,
          sentence: t?.employees?.evidence,
          detail: `labelled ${p.employees ?? 'none stated'}`,
        });
      }
      if (p.employees !== null) {
        eFn++;
        if (got === null) findings.push({ kind: 'miss', file: p.file, what: `employees ${p.employees}` });
      }
    }
    const want = new Set(p.executive_officers.map(normName));
    const have = new Set((t?.executives ?? []).map((x) => normName(x.name)));
    for (const n of have) {
      if (want.has(n)) oTp++;
      else {
        oFp++;
        findings.push({ kind: 'false_hit', file: p.file, what: `executive officer "${n}"` });
      }
    }
    for (const n of want)
      if (!have.has(n)) {
        oFn++;
        findings.push({ kind: 'miss', file: p.file, what: `executive officer "${n}"` });
      }
  }

  return {
    corpus,
    signals,
    signal_sentences,
    events,
    product_launch: score(lTp, lFp, lFn),
    profile: { employees: score(eTp, eFp, eFn), executive_officers: score(oTp, oFp, oFn) },
    findings,
    counts: {
      ten_k: parsed.tenK.size,
      eight_k_filings: labels.eightK.filings.length,
      signal_sentences: labels.signals.sentences.length,
      signal_hit_sentences: labels.signals.sentences.filter((l) => l.label === 'hit').length,
    },
  };
}

export interface Target {
  metric: string;
  min: number;
  value: number;
  ok: boolean;
  accepted_floor?: number;
}

/**
 * Targets of issue 26: signals precision ≥ 0.9 and recall ≥ 0.7 per type; 8-K events ≥ 0.95 (precision and
 * recall, per type and overall); product launches precision ≥ 0.8; employees and executive officers ≥ 0.95.
 * `floors` holds the measured value of a metric that is served with its measured precision instead of
 * reaching the target: CI then fails only when it drops below that floor.
 */
export function checkTargets(r: EvalResult, floors: Record<string, number> = {}): Target[] {
  const out: Target[] = [];
  const add = (metric: string, min: number, value: number) => {
    const floor = floors[metric];
    out.push({
      metric,
      min,
      value,
      ok: value >= (floor !== undefined ? Math.min(floor, min) : min),
      ...(floor !== undefined ? { accepted_floor: floor } : {}),
    });
  };
  for (const [t, s] of Object.entries(r.signals)) {
    add(`signals.${t}.precision`, 0.9, s.precision);
    add(`signals.${t}.recall`, 0.7, s.recall);
  }
  for (const [t, s] of Object.entries(r.events)) {
    add(`events.${t}.precision`, 0.95, s.precision);
    add(`events.${t}.recall`, 0.95, s.recall);
  }
  add('product_launch.precision', 0.8, r.product_launch.precision);
  for (const f of ['employees', 'executive_officers'] as const) {
    add(`profile.${f}.precision`, 0.95, r.profile[f].precision);
    add(`profile.${f}.recall`, 0.95, r.profile[f].recall);
  }
  return out;
}
