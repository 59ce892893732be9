import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { mergeEarningsCall, parseEarningsCallEvents, parseEarningsCallPart } from '../../ingest/transcripts/earningscall.ts';
import { buildExtraction, renderTranscriptMarkdown } from '../../ingest/transcripts/extract.ts';
import { parseMotleyTranscript, parseParticipant } from '../../ingest/transcripts/motley.ts';
import { extractPdfPages } from '../../ingest/transcripts/pdf-text.ts';
import { parseTranscriptMarkdown, parseTranscriptText } from '../../ingest/transcripts/text-transcript.ts';
import { extractFacts, splitSentences } from '../../ingest/transcripts/facts.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

const ec = (...names: string[]) =>
  mergeEarningsCall(names.map((n) => parseEarningsCallPart(readFileSync(fixture(`sec/transcripts/earningscall/${n}`)), n)));
const golden = (name: string) => `../golden/transcripts/${name}`;

describe.skipIf(!HAS_SHARED)('EarningsCall transcripts (real fixtures)', () => {
  it('AAPL Q1 FY22: merges levels 2-4, names speakers from the operator, counts Q&A questions', async () => {
    const x = buildExtraction(ec('AAPL_2022_Q1.level2.json', 'AAPL_2022_Q1.level3.json', 'AAPL_2022_Q1.level4.json'));
    expect(x).toMatchObject({ fiscal_year: 2022, fiscal_quarter: 1, call_date: '2022-01-27', qa: { present: true } });
    expect(x.speakers.find((s) => s.role === 'operator')?.id).toBe('spk03');
    expect(x.speakers.filter((s) => s.role === 'analyst').map((s) => s.name)).toContain('Katie Huberty');
    await expect(
      JSON.stringify(
        { speakers: x.speakers, qa_questions: x.qa_questions, prepared_remarks: x.prepared_remarks, qa: x.qa, word_count: x.word_count },
        null,
        2,
      ) + '\n',
    ).toMatchFileSnapshot(golden('aapl-q1-fy22.json'));
  });

  it('AAPL Q1 FY23: applies the separately given speaker map (names and titles)', () => {
    const x = buildExtraction(ec('AAPL_2023_Q1.level2.speaker-map.json'));
    expect(x.speakers.find((s) => s.id === 'spk01')).toMatchObject({ name: 'Tim Cook', title: 'CEO', role: 'executive' });
    expect(x.notes).toContain('speaker names and titles from speaker_name_map_v2');
  });

  it('NVDA Q2 FY25: a call without a Q&A section', async () => {
    const x = buildExtraction(ec('NVDA_2025_Q2.level4.json'));
    expect(x.qa).toEqual({ present: false, turns: 0, words: 0, questions: 0 });
    expect(x.call_date).toBe('2024-08-28');
    expect(x.topics.ai).toBeGreaterThan(50);
    await expect(
      JSON.stringify(
        {
          title: x.title,
          qa: x.qa,
          notes: x.notes,
          word_count: x.word_count,
          key_metrics: x.key_metrics.slice(0, 5).map((k) => `${k.metric}: ${k.value}`),
        },
        null,
        2,
      ) + '\n',
    ).toMatchFileSnapshot(golden('nvda-q2-fy25.json'));
  });

  it('MSFT: call-date history from the company events file', async () => {
    const ev = parseEarningsCallEvents(readFileSync(fixture('sec/transcripts/earningscall/MSFT.events.json')), 'MSFT.events.json');
    expect(ev.company).toBe('Microsoft Corporation');
    expect(ev.events[0]).toEqual({
      fiscal_year: 2024,
      fiscal_quarter: 3,
      call_date: '2024-04-25',
      call_time: '2024-04-25T17:30:00.000-04:00',
    });
    await expect(JSON.stringify(ev, null, 2) + '\n').toMatchFileSnapshot(golden('msft-call-dates.json'));
  });

  it('joins word-level timings (level 3) into turns when no level 2 is given', () => {
    const x = buildExtraction(ec('AAPL_2022_Q1.level3.json'));
    expect(x.notes).toContain('turns rebuilt from word-level timings (level 3)');
    expect(x.word_count).toBeGreaterThan(7000);
  });
});

describe.skipIf(!HAS_SHARED)('Motley-Fool JSON and PDF transcripts (real fixtures)', () => {
  it('splits Name--Title participants, also Name--Firm -- Analyst', () => {
    expect(parseParticipant('Omar Saad--Evercore ISI -- Analyst')).toEqual({
      id: 'Omar Saad',
      name: 'Omar Saad',
      title: 'Evercore ISI, Analyst',
      role: 'analyst',
    });
    const x = buildExtraction(
      parseMotleyTranscript(readFileSync(fixture('sec/transcripts/motley-json/JWN_q4_2021.json')), 'JWN_q4_2021.json'),
    );
    expect(x.qa_questions).toBe(5);
    expect(x.speakers.some((s) => s.id.startsWith('Duration'))).toBe(false);
  });

  it('reads the S&P Global PDF: participants, sections, blockchain facts', async () => {
    const pages = await extractPdfPages(readFileSync(fixture('sec/transcripts/pdf/CRCL_2025Q3.pdf')), 'CRCL.pdf');
    const x = buildExtraction(parseTranscriptText(pages, { ticker: 'CRCL' }));
    expect(x).toMatchObject({ ticker: 'CRCL', fiscal_year: 2025, fiscal_quarter: 3, call_date: '2025-11-12' });
    expect(x.speakers.find((s) => s.name === 'Jeremy D. Allaire')).toMatchObject({
      title: 'Co-Founder, Chairman & CEO',
      role: 'executive',
    });
    expect(x.qa.present).toBe(true);
    expect(x.facts.some((f) => f.topic === 'blockchain')).toBe(true);
  });

  it('reads the Intel prepared-remarks PDF as a call without Q&A', async () => {
    const pages = await extractPdfPages(readFileSync(fixture('sec/transcripts/pdf/INTC_2025Q3.pdf')), 'INTC.pdf');
    const x = buildExtraction(parseTranscriptText(pages, { ticker: 'INTC' }));
    expect(x).toMatchObject({ call_date: '2025-10-23', qa: { present: false, questions: 0 } });
    expect(x.speakers.map((s) => s.name)).toEqual(['Lip-Bu Tan', 'Dave Zinsner']);
  });
});

describe('markdown rendering', () => {
  it('round-trips through parseTranscriptMarkdown', () => {
    const parsed = parseTranscriptText(
      [
        'Example Corp (EXM)\nQ2 2024 Earnings Call\n12-Aug-2024\nCORPORATE PARTICIPANTS\nJane Roe\nChief Executive Officer, Example Corp\nOTHER PARTICIPANTS\nJohn Doe\nAnalyst, Big Bank\nMANAGEMENT DISCUSSION SECTION\nOperator: Welcome to the call.\nJane Roe\nChief Executive Officer, Example Corp\nRevenue was $1.2 billion, up 12%. We expect AI revenue to double next year.\nQUESTION AND ANSWER SECTION\nOperator: Our first question comes from John Doe with Big Bank.\nJohn Doe\nAnalyst, Big Bank\nHow is quantum computing going?\nJane Roe\nChief Executive Officer, Example Corp\nOur quantum strategy is long-term.',
      ],
      { ticker: 'EXM' },
    );
    const x = buildExtraction(parsed);
    expect(x).toMatchObject({ fiscal_quarter: 2, fiscal_year: 2024, call_date: '2024-08-12', qa_questions: 1 });
    expect(x.facts.map((f) => `${f.type}/${f.topic}/${f.speaker}`)).toEqual(['guidance/ai/Jane Roe', 'strategy/quantum/Jane Roe']);
    const md = renderTranscriptMarkdown(parsed, x);
    const back = buildExtraction(parseTranscriptMarkdown(md, { ticker: 'EXM' }));
    expect({ ...back, format: 'pdf', notes: [] }).toEqual({ ...x, notes: [] });
  });

  it('splits sentences without breaking decimals', () => {
    expect(splitSentences('Revenue was $1.2 billion. Margin 43.8% was up.')).toEqual(['Revenue was $1.2 billion.', 'Margin 43.8% was up.']);
    expect(extractFacts([{ speaker: 'A', section: 'prepared', text: 'We sell shoes.' }], (s) => s)).toEqual([]);
  });
});
