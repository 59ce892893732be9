/**
 * Earnings-call transcripts: the common shape every input format (EarningsCall
 * API bodies at levels 1-4, Motley-Fool-style JSON, PDF text, markdown) is
 * parsed into, and the JSON extraction built from it (ingest/transcripts/extract.ts).
 */

export type TranscriptFormat = 'earningscall' | 'motley-json' | 'pdf' | 'markdown' | 'html';
export type Section = 'prepared' | 'qa';
export type SpeakerRole = 'operator' | 'executive' | 'analyst' | 'unknown';

/** One speaker turn. `speaker` is a name, or a diarisation id (`spk07`) when the source gives no name. */
export interface Turn {
  speaker: string | null;
  section: Section;
  text: string;
}

export interface Participant {
  /** Name, or diarisation id when unnamed. */
  id: string;
  name: string | null;
  title: string | null;
  role: SpeakerRole;
}

export interface ParsedTranscript {
  ticker: string;
  company: string | null;
  title: string | null;
  fiscal_year: number | null;
  fiscal_quarter: number | null;
  /** YYYY-MM-DD (the call's local date). */
  call_date: string | null;
  /** Full timestamp with offset when the source has one. */
  call_time: string | null;
  format: TranscriptFormat;
  turns: Turn[];
  participants: Participant[];
  /** False when the source says there is no Q&A (e.g. the NVDA level-4 body with `questions_and_answers: null`). */
  has_qa: boolean;
  /** Oddities met while parsing (speaker map applied, word timings joined, Q&A missing, ...). */
  notes: string[];
}

export interface SpeakerSummary {
  id: string;
  name: string | null;
  title: string | null;
  role: SpeakerRole;
  turns: number;
  words: number;
}

export interface KeyMetric {
  metric: string;
  value: string;
  speaker: string | null;
  snippet: string;
}

export type FactType = 'metric' | 'guidance' | 'strategy';

export interface TranscriptFact {
  type: FactType;
  topic: string;
  speaker: string | null;
  section: Section;
  snippet: string;
  /** Name of the documented pattern that matched (docs/quotes-and-transcripts.md, "Facts patterns"). */
  pattern: string;
}

/** The JSON extraction: what `/api/company/{ticker}/transcripts` serves, hashed into the extraction leaf. */
export interface TranscriptExtraction {
  schema: 'proofline/transcript-extraction/v1';
  ticker: string;
  company: string | null;
  title: string;
  fiscal_year: number | null;
  fiscal_quarter: number | null;
  call_date: string | null;
  format: TranscriptFormat;
  speakers: SpeakerSummary[];
  prepared_remarks: { turns: number; words: number };
  qa: { present: boolean; turns: number; words: number; questions: number };
  qa_questions: number;
  key_metrics: KeyMetric[];
  word_count: number;
  topics: Record<string, number>;
  facts: TranscriptFact[];
  notes: string[];
}

/** Counts words as whitespace-separated tokens containing a letter or digit. */
export function countWords(text: string): number {
  let n = 0;
  for (const t of text.split(/\s+/)) if (/[\p{L}\p{N}]/u.test(t)) n++;
  return n;
}
