/**
 * PDF text extraction with `unpdf` (a maintained, dependency-free build of
 * Mozilla's PDF.js): bytes in, one string per page out. No fs or network.
 */
import { extractText, getDocumentProxy } from 'unpdf';
import { ParseError } from '../../lib/errors.ts';

export async function extractPdfPages(bytes: Uint8Array, file: string): Promise<string[]> {
  try {
    // PDF.js may detach the buffer it is given: hand it a copy.
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    const { text } = await extractText(pdf, { mergePages: false });
    return text as string[];
  } catch (e) {
    throw new ParseError(`unreadable PDF: ${(e as Error).message}`, { file });
  }
}
