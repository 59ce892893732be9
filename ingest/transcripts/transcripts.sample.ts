/**
 * Sample earnings-call transcripts as real PDFs (written with pdfkit, text
 * laid out like a FactSet CallStreet transcript so the PDF path of the
 * pipeline is exercised end to end), each with a `.meta.json` sidecar naming
 * the investor-relations URL it stands for, plus one markdown transcript.
 * Deterministic in (scale, seed): fixed document dates and IDs.
 *
 *   transcripts/pdf/TICKER_YYYYQn.pdf (+ .meta.json)
 *   transcripts/markdown/TICKER_FYyyyy_Qn.md
 *
 * Kept small on purpose (PDF generation costs ~20 ms per file): 6 PDFs at
 * small scale, 24 at medium, 60 at full.
 */
import PDFDocument from 'pdfkit';
import { sha256Hex } from '../../lib/hash.ts';
import { Rng, type SampleFile, type SampleGenerator, type SampleOptions, type SampleScale } from '../sample/sample-kit.ts';
import { sampleUniverse, type SampleCompany } from '../sample/universe.ts';

export const TRANSCRIPT_PDFS: Record<SampleScale, number> = { small: 6, medium: 24, full: 60 };
const FIXED_DATE = new Date('2026-11-20T00:00:00Z');
const CALL_DATES = ['2026-10-23', '2026-10-28', '2026-10-29', '2026-11-04', '2026-11-12', '2026-11-18'];
const MON = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const ANALYSTS: Array<[string, string]> = [
  ['Maria Lopez', 'Analyst, Northbridge Securities LLC'],
  ['Daniel Okafor', 'Analyst, Harborview Capital Markets'],
  ['Priya Raman', 'Analyst, Summit Ridge Research'],
  ['Thomas Becker', 'Analyst, Granite Peak Partners LLP'],
];

function sentences(c: SampleCompany, rng: Rng, q: number, fy: number): string[] {
  const rev = (1 + rng.next() * 90).toFixed(1);
  const growth = rng.int(2, 40);
  const margin = (30 + rng.next() * 40).toFixed(1);
  const s = [
    `Revenue was $${rev} billion, up ${growth}% year over year.`,
    `Gross margin was ${margin}%, reflecting a favorable mix.`,
    `For the fourth quarter, we expect revenue to grow in the mid single digits.`,
    `Our strategy remains focused on long-term investments in our platform.`,
  ];
  if (c.theme === 'ai' || c.theme === 'semis' || c.theme === 'software' || rng.bool(0.3))
    s.push(`We expect AI inference demand to keep growing next quarter.`, `Our strategy is to build AI agents into every product.`);
  if (c.theme === 'bank' || rng.bool(0.15))
    s.push(`We are investing in blockchain settlement and tokenized deposits as a long-term opportunity.`);
  if (rng.bool(0.2)) s.push(`We see quantum computing as a long-term opportunity and launched a research partnership.`);
  s.push(`We returned $${(rng.next() * 5).toFixed(1)} billion to shareholders through share repurchases and dividends.`);
  s.push(`This concludes our remarks on the Q${q} FY${fy} results.`);
  return s;
}

/** The text blocks of one sample call, in FactSet layout order. */
export function sampleTranscriptLines(
  c: SampleCompany,
  seed: number,
  i: number,
): { lines: string[]; fy: number; q: number; date: string; hasQa: boolean } {
  const rng = new Rng(seed).fork(`transcript:${c.ticker}`);
  const fy = 2026;
  const q = rng.int(1, 4);
  const date = CALL_DATES[i % CALL_DATES.length];
  const hasQa = i % 5 !== 1; // like the real NVDA body, some calls come without a Q&A section
  const ceo = `${rng.pick(['Alex', 'Jordan', 'Morgan', 'Casey', 'Riley'])} ${rng.pick(['Hart', 'Lindqvist', 'Moreau', 'Tanaka', 'Oyelaran'])}`;
  const cfo = `${rng.pick(['Sam', 'Robin', 'Avery', 'Quinn'])} ${rng.pick(['Fischer', 'Kowalski', 'Nakamura', 'Duarte'])}`;
  const [d, m] = [Number(date.slice(8, 10)), Number(date.slice(5, 7))];
  const analysts = ANALYSTS.slice(0, rng.int(2, 4));
  const lines = [
    `${c.name} (${c.ticker})`,
    `Q${q} ${fy} Earnings Call`,
    `${String(d).padStart(2, '0')}-${MON[m - 1]}-${date.slice(0, 4)}`,
    'CORPORATE PARTICIPANTS',
    ceo,
    `Chief Executive Officer, ${c.name}`,
    cfo,
    `Chief Financial Officer, ${c.name}`,
    'OTHER PARTICIPANTS',
    ...analysts.flat(),
    'MANAGEMENT DISCUSSION SECTION',
    `Operator: Welcome to the ${c.name} Q${q} ${fy} earnings conference call. I will now turn the call over to ${ceo}, Chief Executive Officer.`,
    ceo,
    `Chief Executive Officer, ${c.name}`,
    ...sentences(c, rng, q, fy).slice(0, 5),
    cfo,
    `Chief Financial Officer, ${c.name}`,
    ...sentences(c, rng, q, fy).slice(0, 3),
  ];
  if (hasQa) {
    lines.push('QUESTION AND ANSWER SECTION');
    analysts.forEach(([name, title], k) => {
      lines.push(`Operator: Our ${k === 0 ? 'first' : 'next'} question comes from ${name} with ${title.replace(/^Analyst, /, '')}.`);
      lines.push(
        name,
        title,
        rng.pick([
          `Can you talk about demand for AI products next year?`,
          `How should we think about gross margin for the fourth quarter?`,
          `What is the long-term strategy for capital returns?`,
        ]),
      );
      const exec = rng.bool() ? ceo : cfo;
      lines.push(
        exec,
        `${exec === ceo ? 'Chief Executive Officer' : 'Chief Financial Officer'}, ${c.name}`,
        rng.pick([
          `We expect demand to remain strong next quarter.`,
          `Our strategy is unchanged and we will continue to invest in our platform.`,
          `Gross margin should be roughly 45% for the fourth quarter.`,
        ]),
      );
    });
  }
  return { lines, fy, q, date, hasQa };
}

/** Renders lines into a PDF (Helvetica, one paragraph per line, fixed metadata and document ID). */
export function renderPdf(title: string, lines: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: 'LETTER',
      margin: 54,
      info: { Title: title, Producer: 'Proofline sample', Creator: 'Proofline sample', CreationDate: FIXED_DATE, ModDate: FIXED_DATE },
      compress: true,
    });
    // pdfkit derives the file ID from the creation date and info: fixed above, so bytes are reproducible.
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.font('Helvetica').fontSize(10);
    for (const l of lines) {
      const heading = /^(CORPORATE PARTICIPANTS|OTHER PARTICIPANTS|MANAGEMENT DISCUSSION SECTION|QUESTION AND ANSWER SECTION)$/.test(l);
      doc.font(heading ? 'Helvetica-Bold' : 'Helvetica').text(l, { lineGap: 2 });
      if (heading) doc.moveDown(0.3);
    }
    doc.end();
  });
}

export const transcriptsSampleGenerator: SampleGenerator = {
  name: 'transcripts',
  async *generate({ scale, seed }: SampleOptions): AsyncIterable<SampleFile> {
    const companies = sampleUniverse(scale, seed)
      .filter((c) => c.active)
      .slice(0, TRANSCRIPT_PDFS[scale]);
    for (let i = 0; i < companies.length; i++) {
      const c = companies[i];
      const t = sampleTranscriptLines(c, seed, i);
      const name = `${c.ticker}_${t.fy}Q${t.q}.pdf`;
      const pdf = await renderPdf(`${c.name} Q${t.q} ${t.fy} Earnings Call`, t.lines);
      const url = `https://investors.${c.ticker.toLowerCase()}.example/files/${name}`;
      yield { path: `transcripts/pdf/${name}`, content: pdf };
      // Stands for an IR-site download: URL and time, no TLS details (the sample is generated, not fetched).
      const fetch = {
        url,
        status: 200,
        fetched_at: `${t.date}T23:00:00.000Z`,
        content_sha256: sha256Hex(pdf),
        byte_size: pdf.length,
        content_type: 'application/pdf',
        addresses: [],
        remote_address: null,
        tls: null,
        note: 'sample generator: not fetched over the network',
      };
      yield {
        path: `transcripts/pdf/${name}.meta.json`,
        content: JSON.stringify({ source_url: url, retrieved_at: fetch.fetched_at, fetch }, null, 2),
      };
    }
    const c = companies[0];
    if (c) {
      const t = sampleTranscriptLines(c, seed, 99);
      const md = [
        `# ${c.name} Q${t.q} FY${t.fy - 1} earnings call`,
        '',
        `- Ticker: ${c.ticker}`,
        `- Fiscal period: Q${t.q} FY${t.fy - 1}`,
        `- Call date: ${t.fy - 1}${t.date.slice(4)}`,
        '',
        '## Participants',
        '',
        '- Operator (operator)',
        '',
        '## Prepared remarks',
        '',
        '### Operator',
        '',
        `Welcome to the call. Revenue was $12.5 billion, up 8%. We expect AI revenue to double next year.`,
        '',
      ].join('\n');
      yield { path: `transcripts/markdown/${c.ticker}_FY${t.fy - 1}_Q${t.q}.md`, content: md };
    }
  },
};
