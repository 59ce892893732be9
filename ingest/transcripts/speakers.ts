/**
 * Speaker and section heuristics shared by the transcript parsers.
 *
 * - Q&A boundary: the first operator introduction of a questioner
 *   (`OPERATOR_INTRO`), or the exact start of a separately given Q&A text.
 * - Questioners: every operator introduction in the Q&A counts as one question
 *   (`countOperatorIntros`); when a transcript has no introductions but knows
 *   analysts, each run of turns by one analyst counts as one.
 * - Unnamed diarisation ids (`spk07`) get a name from the operator's words:
 *   "question from NAME with FIRM" names the next new voice (title
 *   "Analyst, FIRM"); "turn the call over to NAME, TITLE" names the next voice.
 */
import type { Participant, Turn } from './transcript.schema.ts';

/** An operator introducing a questioner. Group 1: name; group 2: firm (optional). */
export const OPERATOR_INTRO =
  /\b(?:(?:first|next|following|last|final)\s+question\s+(?:comes\s+|is\s+)?(?:from|of)|take\s+(?:a|our|the)\s+(?:first\s+|next\s+)?question\s+from|question\s+(?:comes\s+|is\s+)?from|hear\s+next\s+from|\b[Nn]ext\s+(?:is|up\s+is|caller\s+is|we\s+have))(?:\s+the\s+line\s+of)?\s+([A-Z][\w'.\-]+(?:\s+[A-Z][\w'.\-]+){0,3})(?:\s+(?:with|from|of)\s+([A-Z][\w&'.\-]*(?:\s+(?:of|and|&|[A-Z][\w&'.\-]*)){0,4}))?/g;

/** Counts operator introductions of questioners in a text. */
export function countOperatorIntros(text: string): number {
  return [...text.matchAll(OPERATOR_INTRO)].length;
}

/**
 * Marks turns as prepared remarks or Q&A. With `qaText`, the boundary is where
 * that text starts (the turn holding it is split there); otherwise the first
 * operator introduction. `hasQa = false` keeps everything in prepared remarks.
 */
export function splitAtQa(turns: Turn[], qaText: string | null, hasQa: boolean): Turn[] {
  if (!hasQa) return turns.map((t) => ({ ...t, section: 'prepared' }));
  let at = -1;
  let offset = 0;
  if (qaText) {
    const probe = qaText.trim().slice(0, 60);
    for (let i = 0; i < turns.length && at < 0; i++) {
      const k = turns[i].text.indexOf(probe);
      if (k >= 0) {
        at = i;
        offset = k;
      }
    }
  }
  if (at < 0) {
    for (let i = 0; i < turns.length && at < 0; i++) {
      OPERATOR_INTRO.lastIndex = 0;
      const m = OPERATOR_INTRO.exec(turns[i].text);
      if (m) {
        at = i;
        // Start the Q&A at the sentence holding the first introduction.
        const before = turns[i].text.slice(0, m.index);
        const dot = Math.max(before.lastIndexOf('. '), before.lastIndexOf('? '), before.lastIndexOf('! '));
        offset = dot >= 0 ? dot + 2 : 0;
      }
    }
  }
  if (at < 0) return turns.map((t) => ({ ...t, section: 'prepared' }));
  const out: Turn[] = [];
  turns.forEach((t, i) => {
    if (i < at) out.push({ ...t, section: 'prepared' });
    else if (i > at) out.push({ ...t, section: 'qa' });
    else {
      const head = t.text.slice(0, offset).trim();
      const tail = t.text.slice(offset).trim();
      if (head) out.push({ ...t, section: 'prepared', text: head });
      if (tail) out.push({ ...t, section: 'qa', text: tail });
    }
  });
  return out;
}

/**
 * Participants of a transcript whose turns carry diarisation ids or names:
 * operator by its introductions, analysts and hand-overs named from the
 * operator's words; everyone else listed by id with role `unknown`.
 */
export function inferSpeakers(turns: Turn[]): Participant[] {
  const ids = [...new Set(turns.map((t) => t.speaker).filter((s): s is string => !!s))];
  const intros = new Map<string, number>();
  for (const t of turns)
    if (t.speaker)
      intros.set(t.speaker, (intros.get(t.speaker) ?? 0) + countOperatorIntros(t.text) + (/\bnext question\b/i.test(t.text) ? 0.1 : 0));
  const opEntry = [...intros.entries()].sort((a, b) => b[1] - a[1])[0];
  const operator = opEntry && opEntry[1] >= 1 ? opEntry[0] : (ids.find((s) => /^operator$/i.test(s)) ?? null);
  const named = new Map<string, { name: string; title: string | null; role: Participant['role'] }>();
  if (operator) named.set(operator, { name: 'Operator', title: null, role: 'operator' });
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i];
    if (!t.speaker) continue;
    const handover = /\bturn (?:the call|it|the conference) over to ([A-Z][\w'.\-]+(?:\s+[A-Z][\w'.\-]+){0,3}),\s*([^.]{3,80})\./.exec(
      t.text,
    );
    OPERATOR_INTRO.lastIndex = 0;
    const intro = [...t.text.matchAll(OPERATOR_INTRO)].pop();
    const who = intro
      ? {
          name: intro[1].trim(),
          title: intro[2] ? `Analyst, ${intro[2].replace(/[.,]+$/, '').trim()}` : 'Analyst',
          role: 'analyst' as const,
        }
      : handover
        ? { name: handover[1].trim(), title: handover[2].trim(), role: 'executive' as const }
        : null;
    if (!who) continue;
    // The next voice that is not the speaker (nor the operator) and not yet named gets the name.
    for (let j = i + 1; j < turns.length; j++) {
      const s = turns[j].speaker;
      if (!s || s === t.speaker || s === operator) continue;
      if (!named.has(s) && ![...named.values()].some((v) => v.name === who.name)) named.set(s, who);
      break;
    }
  }
  return ids.map((id) => {
    const n = named.get(id);
    if (n) return { id, ...n };
    if (/^spk\d+$/i.test(id)) return { id, name: null, title: null, role: 'unknown' };
    return { id, name: id, title: null, role: /^operator$/i.test(id) ? 'operator' : 'unknown' };
  });
}
