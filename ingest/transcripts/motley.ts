/**
 * Motley-Fool-style transcript JSON (../shared/fixtures/sec/transcripts/motley-json/):
 * `{header_texts, prepared_remarks: [{speaker, speech}], q_and_a: [{speaker, speech}], participants: ["Name--Title", "Name--Firm -- Analyst"]}`.
 * File names `TICKER_qN_YYYY.json` give ticker and quarter (calendar-labelled by the site).
 */
import { ParseError } from '../../lib/errors.ts';
import type { ParsedTranscript, Participant, Turn } from './transcript.schema.ts';
import { inferSpeakers } from './speakers.ts';

/** Splits `Name--Title` (titles may themselves contain ` -- `, e.g. `Evercore ISI -- Analyst`). */
export function parseParticipant(s: string): Participant {
  const i = s.indexOf('--');
  const name = (i >= 0 ? s.slice(0, i) : s).trim();
  const title =
    i >= 0
      ? s
          .slice(i + 2)
          .replace(/\s+--\s+/g, ', ')
          .trim() || null
      : null;
  const role = /^operator$/i.test(name) ? 'operator' : title && /\banalyst\b/i.test(title) ? 'analyst' : title ? 'executive' : 'unknown';
  return { id: name, name, title, role };
}

export function parseMotleyTranscript(bytes: Uint8Array | string, file: string): ParsedTranscript {
  // biome-ignore lint/suspicious/noExplicitAny: untyped JSON of the source; every field read is coerced (String(), Number()) where it is used
  let d: any;
  try {
    d = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    throw new ParseError(`invalid JSON: ${(e as Error).message}`, { file });
  }
  if (!Array.isArray(d?.prepared_remarks)) throw new ParseError('no prepared_remarks array', { file });
  const m = /([A-Z][A-Z0-9.\-]*)_q([1-4])_(\d{4})/i.exec(file.split('/').pop() ?? file);
  // biome-ignore lint/suspicious/noExplicitAny: untyped JSON of the source; every field read is coerced (String(), Number()) where it is used
  const toTurns = (xs: any[], section: Turn['section']): Turn[] =>
    (xs ?? []).map((x) => ({ speaker: String(x.speaker ?? '').trim() || null, section, text: String(x.speech ?? '').trim() }));
  // The site appends `Duration: NN minutes` as a last pseudo-speaker: not a turn.
  const turns = [...toTurns(d.prepared_remarks, 'prepared'), ...toTurns(d.q_and_a ?? [], 'qa')].filter(
    (t) => !/^Duration:/i.test(t.speaker ?? ''),
  );
  const declared = (Array.isArray(d.participants) ? d.participants : []).map((p: unknown) => parseParticipant(String(p)));
  const participants: Participant[] = [...declared];
  for (const p of inferSpeakers(turns))
    if (!participants.some((x) => x.id === p.id)) participants.push(p.id === 'Operator' ? { ...p, role: 'operator' } : p);
  return {
    ticker: m ? m[1].toUpperCase() : 'UNKNOWN',
    company: null,
    title: null,
    fiscal_year: m ? Number(m[3]) : null,
    fiscal_quarter: m ? Number(m[2]) : null,
    call_date: null,
    call_time: null,
    format: 'motley-json',
    turns,
    participants,
    has_qa: turns.some((t) => t.section === 'qa'),
    notes: ['participants given as Name--Title strings', 'no call date in the source'],
  };
}
