/**
 * The JSON extraction and markdown rendering of a parsed transcript.
 * Pure and deterministic: the same parsed transcript always gives the same
 * extraction bytes, so its leaf hash is stable.
 */
import { countOperatorIntros } from './speakers.ts';
import { countTopics, extractFacts, extractKeyMetrics } from './facts.ts';
import { countWords, type ParsedTranscript, type SpeakerSummary, type TranscriptExtraction } from './transcript.schema.ts';

export function buildExtraction(p: ParsedTranscript): TranscriptExtraction {
  const byId = new Map(p.participants.map((x) => [x.id, x]));
  const speakerName = (id: string | null) => (id ? (byId.get(id)?.name ?? id) : null);
  const stats = new Map<string, { turns: number; words: number }>();
  for (const t of p.turns) {
    if (!t.speaker) continue;
    const s = stats.get(t.speaker) ?? { turns: 0, words: 0 };
    s.turns++;
    s.words += countWords(t.text);
    stats.set(t.speaker, s);
  }
  const speakers: SpeakerSummary[] = [];
  for (const x of p.participants)
    speakers.push({
      id: x.id,
      name: x.name,
      title: x.title,
      role: x.role,
      turns: stats.get(x.id)?.turns ?? 0,
      words: stats.get(x.id)?.words ?? 0,
    });
  for (const [id, s] of stats) if (!byId.has(id)) speakers.push({ id, name: id, title: null, role: 'unknown', ...s });
  const prepared = p.turns.filter((t) => t.section === 'prepared');
  const qa = p.turns.filter((t) => t.section === 'qa');
  const words = (ts: typeof p.turns) => ts.reduce((a, t) => a + countWords(t.text), 0);
  // Questions: introductions of a questioner in the Q&A; else runs of turns by one analyst.
  // (Any Q&A turn may introduce: diarisation often credits the operator's words to the IR host.)
  let questions = qa.reduce((a, t) => a + countOperatorIntros(t.text), 0);
  if (questions === 0) {
    let prev: string | null = null;
    for (const t of qa) {
      const isAnalyst = t.speaker && byId.get(t.speaker)?.role === 'analyst';
      if (isAnalyst && t.speaker !== prev) questions++;
      if (t.speaker && byId.get(t.speaker)?.role !== 'operator') prev = t.speaker;
    }
  }
  const period = p.fiscal_quarter && p.fiscal_year ? ` Q${p.fiscal_quarter} FY${p.fiscal_year}` : '';
  return {
    schema: 'proofline/transcript-extraction/v1',
    ticker: p.ticker,
    company: p.company,
    title: p.title ?? `${p.company ?? p.ticker}${period} earnings call`,
    fiscal_year: p.fiscal_year,
    fiscal_quarter: p.fiscal_quarter,
    call_date: p.call_date,
    format: p.format,
    speakers,
    prepared_remarks: { turns: prepared.length, words: words(prepared) },
    qa: { present: p.has_qa, turns: qa.length, words: words(qa), questions },
    qa_questions: questions,
    key_metrics: extractKeyMetrics(p.turns, speakerName),
    word_count: words(p.turns),
    topics: countTopics(p.turns),
    facts: extractFacts(p.turns, speakerName),
    notes: p.notes,
  };
}

/** Markdown rendering: parseable again by parseTranscriptMarkdown (text-transcript.ts). */
export function renderTranscriptMarkdown(p: ParsedTranscript, x: TranscriptExtraction): string {
  const byId = new Map(p.participants.map((s) => [s.id, s]));
  const out: string[] = [`# ${x.title}`, '', `- Ticker: ${x.ticker}`];
  if (x.fiscal_quarter && x.fiscal_year) out.push(`- Fiscal period: Q${x.fiscal_quarter} FY${x.fiscal_year}`);
  out.push(
    `- Call date: ${x.call_date ?? 'unknown'}`,
    `- Words: ${x.word_count}; Q&A questions: ${x.qa_questions}`,
    '',
    '## Participants',
    '',
  );
  for (const s of p.participants) out.push(`- ${s.name ?? s.id}${s.title ? ` — ${s.title}` : ''} (${s.role})`);
  const section = (name: string, which: 'prepared' | 'qa') => {
    const ts = p.turns.filter((t) => t.section === which);
    if (!ts.length) return;
    out.push('', `## ${name}`);
    for (const t of ts) {
      const s = t.speaker ? byId.get(t.speaker) : undefined;
      out.push('', `### ${t.speaker ? (s?.name ?? t.speaker) : '(unnamed)'}${s?.title ? ` — ${s.title}` : ''}`, '', t.text);
    }
  };
  section('Prepared remarks', 'prepared');
  section('Questions and answers', 'qa');
  return out.join('\n') + '\n';
}
