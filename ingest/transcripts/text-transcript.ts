/**
 * Transcripts as text: PDF pages (extracted with unpdf, see pdf-text.ts) and
 * markdown. Handles the layouts of the real PDFs in
 * ../shared/fixtures/sec/transcripts/pdf/ and the sample generator's:
 *
 * - FactSet CallStreet: `CORPORATE PARTICIPANTS` / `OTHER PARTICIPANTS` (name line, title line),
 *   `MANAGEMENT DISCUSSION SECTION`, `QUESTION AND ANSWER SECTION`, turns `Operator: ...` or a
 *   name line (sometimes glued to its title) followed by the title (`... Q` / `... A`);
 * - S&P Global: `EXECUTIVES` / `ANALYSTS` lists with multi-line titles, `Presentation`, `Question and Answer`;
 * - company-issued prepared remarks (Intel): `<date> – Name, title (bio):` headings, no Q&A.
 *
 * Running headers and footers are removed as lines repeated on three or more
 * pages; page numbers and dotted rules are dropped.
 */
import type { ParsedTranscript, Participant, Section, Turn } from './transcript.schema.ts';
import { inferSpeakers, splitAtQa } from './speakers.ts';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const ORD: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4 };

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** First call date found in `text` (29-Oct-2025, October 23, 2025, 2025-10-23), as YYYY-MM-DD. */
export function findDate(text: string): string | null {
  const a = /\b(\d{1,2})-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*-(\d{4})\b/i.exec(text);
  const b =
    /\b(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+(\d{1,2}),\s+(\d{4})\b/i.exec(
      text,
    );
  const c = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(text);
  const cands: Array<[number, string]> = [];
  if (a) cands.push([a.index, `${a[3]}-${pad(MONTHS.indexOf(a[2].slice(0, 3).toLowerCase()) + 1)}-${pad(Number(a[1]))}`]);
  if (b) cands.push([b.index, `${b[3]}-${pad(MONTHS.indexOf(b[1].slice(0, 3).toLowerCase()) + 1)}-${pad(Number(b[2]))}`]);
  if (c) cands.push([c.index, `${c[1]}-${c[2]}-${c[3]}`]);
  cands.sort((x, y) => x[0] - y[0]);
  return cands[0]?.[1] ?? null;
}

/** Fiscal quarter and year mentioned first (`Q3 2025`, `FQ3 2025`, `third-quarter 2025`, `Q1 FY2022`). */
export function findQuarter(text: string): { quarter: number; year: number } | null {
  const a = /\bF?Q([1-4])\s*(?:FY\s*|fiscal\s+(?:year\s+)?)?'?(\d{4})\b/i.exec(text);
  const b = /\b(first|second|third|fourth)[- ]quarter(?:\s+(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?(\d{4}))?/i.exec(text);
  const c: Array<[number, { quarter: number; year: number }]> = [];
  if (a) c.push([a.index, { quarter: Number(a[1]), year: Number(a[2]) }]);
  if (b?.[2]) c.push([b.index, { quarter: ORD[b[1].toLowerCase()], year: Number(b[2]) }]);
  c.sort((x, y) => x[0] - y[0]);
  return c[0]?.[1] ?? null;
}

function cleanPages(pages: string[]): string[] {
  // Running headers/footers: lines among the first 8 or last 4 of a page that recur on three or more pages.
  // (Speaker name lines recur too, but in the body, so they are kept.)
  const count = new Map<string, number>();
  const edges = (p: string) => {
    const ls = p
      .split('\n')
      .map((x) => x.trim())
      .filter(Boolean);
    return new Set([...ls.slice(0, 8), ...ls.slice(-4)]);
  };
  for (const p of pages) for (const l of edges(p)) count.set(l, (count.get(l) ?? 0) + 1);
  const out: string[] = [];
  for (const p of pages) {
    const edge = edges(p);
    for (const raw of p.split('\n')) {
      const l = raw.trim();
      if (!l || /^\.{5,}$/.test(l) || /^\d{1,3}$/.test(l) || /^copyright ©/i.test(l)) continue;
      if (pages.length >= 3 && edge.has(l) && (count.get(l) ?? 0) >= 3) continue;
      out.push(l);
    }
  }
  return out;
}

const SECTION_PREPARED = /^(MANAGEMENT DISCUSSION SECTION|Presentation|Prepared Remarks)$/i;
const SECTION_QA = /^(QUESTION AND ANSWER SECTION|Question and Answer|Questions and Answers|Q&A)$/i;
const EXEC_HEAD = /^(CORPORATE PARTICIPANTS|EXECUTIVES|Company Participants)$/i;
const ANALYST_HEAD = /^(OTHER PARTICIPANTS|ANALYSTS|Conference Call Participants)$/i;
const NAME_LINE = /^[A-Z][\p{L}'’.\-]+(?:\s+[A-Z][\p{L}'’.\-]*\.?){1,4}$/u;

function readParticipants(lines: string[]): { participants: Participant[]; end: number } {
  const participants: Participant[] = [];
  let role: Participant['role'] | null = null;
  let end = -1;
  let last: Participant | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (EXEC_HEAD.test(l)) {
      role = 'executive';
      continue;
    }
    if (ANALYST_HEAD.test(l)) {
      role = 'analyst';
      continue;
    }
    if (!role) continue;
    if (SECTION_PREPARED.test(l) || SECTION_QA.test(l)) {
      end = i;
      break;
    }
    const continuation =
      last && (last.title === null || /[&,]$/.test(last.title) || /^(Research Division|Division|Investor Relations)\b/.test(l));
    if (last && continuation) {
      last.title = last.title ? `${last.title} ${l}` : l;
      continue;
    }
    if (NAME_LINE.test(l) && !/\b(Inc|LLC|LLP|Ltd|Corp|Division|Partners|Securities|Research|Capital|Group|Company|Bank)\b/.test(l)) {
      last = { id: l, name: l, title: null, role };
      participants.push(last);
    } else if (last) {
      last.title = last.title ? `${last.title} ${l}` : l;
    }
  }
  for (const p of participants) if (p.title) p.title = p.title.replace(/\s+[QA]$/, '').trim();
  return { participants, end };
}

/**
 * Parses transcript text pages. `hint` carries what the file name says
 * (`TICKER_2025Q3.pdf`), used when the text does not name them.
 */
export function parseTranscriptText(
  pages: string[],
  hint: { ticker: string; fiscal_year?: number | null; fiscal_quarter?: number | null },
  format: ParsedTranscript['format'] = 'pdf',
): ParsedTranscript {
  const lines = cleanPages(pages);
  const head = pages.slice(0, 2).join('\n');
  const notes: string[] = [];
  const { participants, end } = readParticipants(lines);
  const known = [...participants].sort((a, b) => b.id.length - a.id.length);
  const turns: Turn[] = [];
  let section: Section = 'prepared';
  let sawSections = false;
  let cur: Turn | null = null;
  let pendingTitleOf: Participant | null = null;
  const start = Math.max(end, 0);
  for (let i = start; i < lines.length; i++) {
    const l = lines[i];
    if (SECTION_PREPARED.test(l)) {
      section = 'prepared';
      sawSections = true;
      continue;
    }
    if (SECTION_QA.test(l)) {
      section = 'qa';
      sawSections = true;
      cur = null;
      continue;
    }
    if (pendingTitleOf) {
      const t = pendingTitleOf.title ?? '';
      pendingTitleOf = null;
      if (t && (l.startsWith(t.slice(0, Math.min(12, t.length))) || /\s[QA]$/.test(l))) continue;
    }
    const op = /^Operator:?\s*(.*)$/.exec(l);
    if (op) {
      cur = { speaker: 'Operator', section, text: op[1] };
      turns.push(cur);
      continue;
    }
    const p = known.find(
      (k) =>
        l === k.id ||
        l.startsWith(`${k.id}:`) ||
        (l.startsWith(k.id) &&
          k.title !== null &&
          l
            .slice(k.id.length)
            .trim()
            .startsWith(k.title.slice(0, Math.min(12, k.title.length)))),
    );
    if (p) {
      const rest = l.slice(p.id.length).replace(/^:\s*/, '');
      const inline = l.startsWith(`${p.id}:`) ? rest : '';
      cur = { speaker: p.id, section, text: inline };
      turns.push(cur);
      if (l === p.id) pendingTitleOf = p;
      continue;
    }
    const heading = /^(?:.*?[–—-]\s+)?([A-Z][\p{L}'’.\-]+(?:\s+[A-Z][\p{L}'’.\-]+){1,3}),\s*([^:]{3,80}?)(?:\s*\(bio\))?:$/u.exec(l);
    if ((heading && participants.length === 0) || (heading && !known.length)) {
      const name = heading[1];
      if (!participants.some((x) => x.id === name))
        participants.push({ id: name, name, title: heading[2].trim(), role: /analyst/i.test(heading[2]) ? 'analyst' : 'executive' });
      cur = { speaker: name, section, text: '' };
      turns.push(cur);
      continue;
    }
    if (cur) cur.text += (cur.text ? ' ' : '') + l;
  }
  let finalTurns = turns.filter((t) => t.text.trim());
  if (finalTurns.length === 0) {
    finalTurns = [{ speaker: null, section: 'prepared', text: lines.slice(start).join(' ') }];
    notes.push('no speaker labels found: one block of text');
  }
  if (!sawSections) finalTurns = splitAtQa(finalTurns, null, true);
  for (const s of inferSpeakers(finalTurns)) if (!participants.some((x) => x.id === s.id)) participants.push(s);
  const q = findQuarter(head);
  const tickerInText = /\(([A-Z]{1,5})\)|\b(?:NYSE|NASDAQ|Nasdaq|NasdaqGS):([A-Z.]{1,6})\b/.exec(head);
  const hasQa = finalTurns.some((t) => t.section === 'qa');
  if (!hasQa) notes.push('no Q&A section in the transcript');
  const titleLine =
    lines.find((l) => l.length <= 80 && !/^operator/i.test(l) && /earnings call|conference call|call comments/i.test(l)) ?? null;
  return {
    ticker: hint.ticker || tickerInText?.[1] || tickerInText?.[2] || 'UNKNOWN',
    company: null,
    title: titleLine,
    fiscal_year: q?.year ?? hint.fiscal_year ?? null,
    fiscal_quarter: q?.quarter ?? hint.fiscal_quarter ?? null,
    call_date: findDate(head),
    call_time: null,
    format,
    turns: finalTurns,
    participants,
    has_qa: hasQa,
    notes,
  };
}

/**
 * Parses the markdown rendering (renderTranscriptMarkdown in extract.ts):
 * `# title`, `- Ticker: X`, `- Fiscal period: Q1 FY2022`, `- Call date: YYYY-MM-DD`,
 * `## Participants` bullets `- Name — Title (role)`, `## Prepared remarks` / `## Questions and answers`,
 * and one `### Speaker` heading per turn.
 */
export function parseTranscriptMarkdown(text: string, hint: { ticker: string }): ParsedTranscript {
  const lines = text.split(/\r?\n/);
  let title: string | null = null;
  let ticker = hint.ticker;
  let fy: number | null = null;
  let fq: number | null = null;
  let date: string | null = null;
  const participants: Participant[] = [];
  const turns: Turn[] = [];
  let block: 'meta' | 'participants' | Section = 'meta';
  let cur: Turn | null = null;
  for (const raw of lines) {
    const l = raw.trim();
    if (l.startsWith('# ')) {
      title = l.slice(2).trim();
      continue;
    }
    if (/^## participants/i.test(l)) {
      block = 'participants';
      continue;
    }
    if (/^## prepared remarks/i.test(l)) {
      block = 'prepared';
      cur = null;
      continue;
    }
    if (/^## (questions and answers|q&a)/i.test(l)) {
      block = 'qa';
      cur = null;
      continue;
    }
    if (block === 'meta') {
      const m = /^- (Ticker|Fiscal period|Call date):\s*(.+)$/i.exec(l);
      if (m?.[1].toLowerCase() === 'ticker') ticker = m[2].trim();
      if (m?.[1].toLowerCase() === 'fiscal period') {
        const q = /Q([1-4])\s+FY\s*(\d{4})/i.exec(m[2]);
        if (q) {
          fq = Number(q[1]);
          fy = Number(q[2]);
        }
      }
      if (m?.[1].toLowerCase() === 'call date') date = /\d{4}-\d{2}-\d{2}/.exec(m[2])?.[0] ?? null;
      continue;
    }
    if (block === 'participants') {
      const m = /^- (.+?)(?: — (.+?))?(?: \((operator|executive|analyst|unknown)\))?$/.exec(l);
      if (m) participants.push({ id: m[1], name: m[1], title: m[2] ?? null, role: (m[3] as Participant['role']) ?? 'unknown' });
      continue;
    }
    if (l.startsWith('### ')) {
      const name = l.slice(4).split(' — ')[0].trim();
      cur = { speaker: name === '(unnamed)' ? null : name, section: block, text: '' };
      turns.push(cur);
      continue;
    }
    if (cur && l) cur.text += (cur.text ? ' ' : '') + l;
  }
  return {
    ticker,
    company: null,
    title,
    fiscal_year: fy,
    fiscal_quarter: fq,
    call_date: date,
    call_time: null,
    format: 'markdown',
    turns: turns.filter((t) => t.text),
    participants,
    has_qa: turns.some((t) => t.section === 'qa'),
    notes: [],
  };
}
