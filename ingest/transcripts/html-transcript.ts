/**
 * Transcripts published as HTML pages on investor-relations sites (TRANSCRIPTS_IR_URLS entries whose URL is not a
 * PDF): the page's text (ingest/edgar/html-text.ts: scripts, styles and the head dropped, block elements as line
 * breaks, entities decoded) read as one page by the text-transcript parser, so the layouts it knows from the PDFs
 * (FactSet CallStreet, S&P Global, company-issued remarks) are read alike. A body that is not HTML (an IR site's
 * PDF behind a URL without `.pdf`, a JSON error) is a ParseError naming the file.
 */
import { ParseError } from '../../lib/errors.ts';
import { htmlToText, looksLikeHtml } from '../edgar/html-text.ts';
import { parseTranscriptText } from './text-transcript.ts';
import type { ParsedTranscript } from './transcript.schema.ts';

export function parseTranscriptHtml(
  bytes: Uint8Array,
  file: string,
  hint: { ticker: string; fiscal_year?: number | null; fiscal_quarter?: number | null },
): ParsedTranscript {
  const html = Buffer.from(bytes).toString('utf8');
  if (!looksLikeHtml(html))
    throw new ParseError('not an HTML page (no html, body, div, p or br element in the first 20,000 characters)', { file });
  const text = htmlToText(html);
  if (!text.trim()) throw new ParseError('HTML page without text', { file });
  return parseTranscriptText([text], hint, 'html');
}
