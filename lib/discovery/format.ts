/** Human-readable summaries of discovery and re-verification results (the CLI's default output). */
import type { DiscoveryReport } from './discover.ts';
import type { ReverifyResult } from './reverify.ts';
import type { DocumentVerdict } from './verify.ts';

function line(v: DocumentVerdict): string {
  const sig =
    v.signature.status === 'absent'
      ? v.signature.claimed
        ? `signer ${v.signature.claimed} claimed, no signature`
        : 'unsigned'
      : `signature ${v.signature.status}${v.signature.scheme ? ` (${v.signature.scheme})` : ''}${v.signature.recovered ? ` by ${v.signature.recovered}` : ''}`;
  const legacy = v.hash.legacyMethod ? ` [published hash uses ${v.hash.legacyMethod}]` : '';
  return `hash ${v.hash.status}${legacy}, tier ${v.tier}, ${sig}, origin ${v.origin}`;
}

/** A short multi-line summary of a discovery report. */
export function formatReport(r: DiscoveryReport): string {
  const out: string[] = [`Target:      ${r.target}`, `Observed at: ${r.observedAt}`];
  if (!r.found || !r.manifest) {
    out.push('Result:      no manifest');
    for (const a of r.attempts) out.push(`  ${a.step.padEnd(11)} ${a.outcome.padEnd(8)} ${a.url}${a.reason ? ` (${a.reason})` : ''}`);
    return out.join('\n');
  }
  const m = r.manifest;
  out.push(`Found by:    ${r.foundBy} → ${r.manifestUrl}`);
  out.push(
    `Publisher:   ${m.normalized.organization.name ?? '?'} (${m.normalized.organization.domain ?? '?'}), spec ${m.normalized.specVersion ?? '?'}`,
  );
  out.push(`Manifest:    ${line(m)}`);
  const c = r.conformance ?? m.conformance;
  out.push(
    `Spec 1.1.1:  ${c.valid ? 'conforms' : `does not conform (${c.issues.length} issues: ${c.issues.slice(0, 3).join('; ')}${c.issues.length > 3 ? '; …' : ''})`}`,
  );
  for (const f of r.files)
    out.push(
      `  ${f.role.padEnd(10)} ${f.verdict ? line(f.verdict) : `not verified: ${f.error}`}${f.inArchive === false ? ' (not in archive)' : ''}`,
    );
  if (r.pages.length) {
    const ok = r.pages.filter((p) => p.status === 'match').length;
    out.push(`Pages:       ${ok}/${r.pages.length} served bytes match the page manifest`);
    for (const p of r.pages.filter((x) => x.status !== 'match')) out.push(`  ${p.path}: ${p.status}${p.error ? ` (${p.error})` : ''}`);
  }
  const warnings = [...m.warnings, ...r.files.flatMap((f) => f.verdict?.warnings ?? []), ...r.warnings];
  if (warnings.length) {
    out.push(`Warnings (${warnings.length}):`);
    for (const w of warnings.slice(0, 20)) out.push(`  - ${w}`);
    if (warnings.length > 20) out.push(`  … ${warnings.length - 20} more (use --json)`);
  }
  return out.join('\n');
}

/** A short summary of a re-verification. */
export function formatReverify(r: ReverifyResult): string {
  return [
    `Subject: ${r.subject}`,
    `Verdict: ${r.verdict}`,
    ...r.resources.map((x) => `  ${x.verdict.padEnd(18)} ${x.resource} (${x.reason})`),
  ].join('\n');
}
