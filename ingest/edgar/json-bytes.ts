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
    // V8 gives a position for most errors; a truncated document ends at the last byte.
    const position = pos ? Number(pos[1]) : /end of JSON input/i.test(msg) ? text.length : null;
    let line: number | undefined;
    if (position != null) line = text.slice(0, position).split('\n').length;
    throw new ParseError(`malformed JSON: ${msg}`, { file, position: position ?? undefined, line });
  }
}
