/**
 * EarningsCall API bodies (../shared/fixtures/sec/transcripts/earningscall/):
 *
 * | level | shape                                                                  |
 * |-------|------------------------------------------------------------------------|
 * | 1     | `{text}` plain text, no event, no speakers                             |
 * | 2     | `{event, speakers: [{speaker: "spk03", text}], speaker_name_map_v2?}`  |
 * | 3     | `{event, speakers: [{speaker, words: [...], start_times: [...]}]}`     |
 * | 4     | `{event, prepared_remarks, questions_and_answers}` (QA may be null)     |
 *
 * `event = {year, quarter, conference_date}` (fiscal year/quarter; the date
 * carries its UTC offset). Files are named `TICKER_YYYY_Qn.levelN[.x].json`;
 * the parts of one call are merged by `mergeEarningsCall`: turns from level 2
 * (or level 3 words joined), the prepared/Q&A boundary from level 4, names and
 * titles from a speaker map. Unnamed diarisation ids get names from what the
 * operator says ("question from NAME with FIRM", "turn the call over to NAME,
 * TITLE"). Company events files (`TICKER.events.json`) give call-date history.
 */
import { ParseError } from '../../lib/errors.ts';
import type { ParsedTranscript, Participant, Turn } from './transcript.schema.ts';
import { splitAtQa, inferSpeakers } from './speakers.ts';

export interface EarningsCallEvent {
  year: number;
  quarter: number;
  conference_date: string;
}

export interface EarningsCallPart {
  file: string;
  ticker: string;
  level: number;
  event: EarningsCallEvent | null;
  text?: string;
  turns?: Array<{ speaker: string; text: string; start?: number | null }>;
  prepared_remarks?: string | null;
  questions_and_answers?: string | null;
  speaker_map?: Record<string, { name: string; title: string | null }>;
}

const NAME_RE = /^([A-Z][A-Z0-9.\-]*)_(\d{4})_Q([1-4])\.level([1-4])/;

/** Ticker, fiscal year, quarter and level from a file name like `AAPL_2022_Q1.level2.json`. */
export function earningsCallFileKey(name: string): { ticker: string; year: number; quarter: number; level: number } | null {
  const m = NAME_RE.exec(name);
  return m ? { ticker: m[1], year: Number(m[2]), quarter: Number(m[3]), level: Number(m[4]) } : null;
}

// biome-ignore lint/suspicious/noExplicitAny: untyped JSON of the source; every field read is coerced (String(), Number()) where it is used
type SourceJson = any;

function parseJson(bytes: Uint8Array | string, file: string): SourceJson {
  try {
    return JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    throw new ParseError(`invalid JSON: ${(e as Error).message}`, { file });
  }
}

/** Parses one EarningsCall body. */
export function parseEarningsCallPart(bytes: Uint8Array | string, file: string): EarningsCallPart {
  const key = earningsCallFileKey(file.split('/').pop() ?? file);
  if (!key) throw new ParseError('EarningsCall file name must look like TICKER_YYYY_Qn.levelN.json', { file });
  const d = parseJson(bytes, file);
  const event =
    d.event && typeof d.event.year === 'number'
      ? { year: d.event.year, quarter: d.event.quarter, conference_date: String(d.event.conference_date) }
      : null;
  const part: EarningsCallPart = { file, ticker: key.ticker, level: key.level, event };
  if (typeof d.text === 'string') part.text = d.text;
  if (Array.isArray(d.speakers)) {
    part.turns = d.speakers.map((s: SourceJson, i: number) => {
      if (typeof s.text === 'string') return { speaker: String(s.speaker), text: s.text };
      if (Array.isArray(s.words))
        return {
          speaker: String(s.speaker),
          text: s.words.join(' '),
          start: Array.isArray(s.start_times) ? (s.start_times[0] ?? null) : null,
        };
      throw new ParseError(`speakers[${i}] has neither text nor words`, { file, position: i });
    });
  }
  if ('prepared_remarks' in d) {
    part.prepared_remarks = d.prepared_remarks ?? null;
    part.questions_and_answers = d.questions_and_answers ?? null;
  }
  if (d.speaker_name_map_v2 && typeof d.speaker_name_map_v2 === 'object') {
    part.speaker_map = Object.fromEntries(
      Object.entries(d.speaker_name_map_v2 as Record<string, SourceJson>).map(([k, v]) => [
        k,
        { name: String(v.name), title: v.title ?? null },
      ]),
    );
  }
  if (!part.text && !part.turns && !('prepared_remarks' in d))
    throw new ParseError('no text, speakers or prepared_remarks in EarningsCall body', { file });
  return part;
}

/** Merges the parts of one call (same ticker, year, quarter) into a transcript. */
export function mergeEarningsCall(parts: EarningsCallPart[]): ParsedTranscript {
  if (parts.length === 0) throw new Error('mergeEarningsCall: no parts');
  const byLevel = [...parts].sort((a, b) => a.level - b.level);
  const key = earningsCallFileKey(byLevel[0].file.split('/').pop()!)!;
  const event = byLevel.find((p) => p.event)?.event ?? null;
  const notes: string[] = [];
  const l2 = byLevel.find((p) => p.turns && p.level === 2);
  const l3 = byLevel.find((p) => p.turns && p.level === 3);
  const l4 = byLevel.find((p) => p.prepared_remarks !== undefined);
  const l1 = byLevel.find((p) => p.text);
  const map = byLevel.find((p) => p.speaker_map)?.speaker_map;
  let turns: Turn[] = [];
  let hasQa = true;
  const qaText = l4 ? (l4.questions_and_answers ?? null) : undefined;
  if (l4 && qaText === null) {
    hasQa = false;
    notes.push('source has no Q&A section (questions_and_answers is null)');
  }
  const speakerTurns = l2?.turns ?? l3?.turns;
  if (l3 && !l2) notes.push('turns rebuilt from word-level timings (level 3)');
  if (speakerTurns) {
    turns = splitAtQa(
      speakerTurns.map((t) => ({ speaker: t.speaker, section: 'prepared' as const, text: t.text })),
      qaText ?? null,
      hasQa,
    );
  } else if (l4) {
    turns = [{ speaker: null, section: 'prepared', text: l4.prepared_remarks ?? '' }];
    if (qaText) turns.push({ speaker: null, section: 'qa', text: qaText });
    notes.push('no speaker turns in the source (level 4: prepared remarks and Q&A as two blocks)');
  } else if (l1?.text) {
    turns = splitAtQa([{ speaker: null, section: 'prepared', text: l1.text }], null, true);
    notes.push('plain text without speakers (level 1)');
  }
  let participants: Participant[];
  if (map) {
    notes.push('speaker names and titles from speaker_name_map_v2');
    participants = Object.entries(map).map(([id, v]) => ({ id, name: v.name, title: v.title, role: roleOf(v.name, v.title) }));
    const inferred = inferSpeakers(turns);
    for (const p of inferred) if (!participants.some((x) => x.id === p.id)) participants.push(p);
  } else {
    participants = inferSpeakers(turns);
  }
  const callDate = event?.conference_date ? event.conference_date.slice(0, 10) : null;
  return {
    ticker: key.ticker,
    company: null,
    title: null,
    fiscal_year: event?.year ?? key.year,
    fiscal_quarter: event?.quarter ?? key.quarter,
    call_date: callDate,
    call_time: event?.conference_date ?? null,
    format: 'earningscall',
    turns,
    participants,
    has_qa: hasQa && turns.some((t) => t.section === 'qa'),
    notes,
  };
}

function roleOf(name: string, title: string | null): Participant['role'] {
  if (/^operator$/i.test(name)) return 'operator';
  if (title && /analyst/i.test(title)) return 'analyst';
  return title ? 'executive' : 'unknown';
}

/** Call-date history from a company events body (`{company_name, events: [{year, quarter, conference_date}]}`). */
export function parseEarningsCallEvents(
  bytes: Uint8Array | string,
  file: string,
): { company: string | null; events: Array<{ fiscal_year: number; fiscal_quarter: number; call_date: string; call_time: string }> } {
  const d = parseJson(bytes, file);
  if (!Array.isArray(d.events)) throw new ParseError('no events array', { file });
  return {
    company: d.company_name ?? null,
    events: d.events.map((e: SourceJson) => ({
      fiscal_year: Number(e.year),
      fiscal_quarter: Number(e.quarter),
      call_date: String(e.conference_date).slice(0, 10),
      call_time: String(e.conference_date),
    })),
  };
}
