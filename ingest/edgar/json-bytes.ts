/** JSON decoding with errors that name the file and the byte position. */
import { ParseError } from '../../lib/errors.ts';

export interface RowReject {
  line: number | null;
  /** JSON pointer of the rejected element, when the input is JSON. */
  pointer?: string;
  reason: string;
  raw: string | null;
}

export function parseJsonBytes(bytes: Uint8Array | string, file: string): unknown {
  const text = typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
  if (text.trim() === '') throw new ParseError('empty file', { file, position: 0 });
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    const msg = (e as Error).message;
    const pos = /position (\d+)/.exec(msg);
    const position = pos ? Number(pos[1]) : null;
    let line: number | undefined;
    if (position != null) line = text.slice(0, position).split('\n').length;
    throw new ParseError(`malformed JSON: ${msg}`, { file, position: position ?? undefined, line });
  }
}
