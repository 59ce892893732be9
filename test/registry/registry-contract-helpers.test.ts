/**
 * The pure helpers behind spec 000's registry fields (issue 19): role spellings compared, people merged per role,
 * career periods as strings, status phrases of the identity card's summary.
 */
import { describe, expect, it } from 'vitest';
import { statusPhrase } from '../../service/company/company.queries.ts';
import { mergeSameRoles, periodText, personNotes, roleKey } from '../../service/registry-layers/registry-layers.queries.ts';

describe('registry contract helpers', () => {
  it('compares two spellings of one role as one', () => {
    expect(roleKey('President and CEO')).toBe(roleKey('President and Chief Executive Officer'));
    expect(roleKey('EVP & CFO')).toBe(roleKey('Executive Vice President and Chief Financial Officer'));
    expect(roleKey('Director')).not.toBe(roleKey('Chief Executive Officer'));
  });

  it('merges rows of one person and role, keeping the fullest spelling and the span of dates', () => {
    const rows = [
      {
        person_key: 'cik1',
        cik: 5,
        person_name: 'Daniel A Jones',
        role: 'President and CEO',
        role_type: 'officer',
        first_seen: '2025-12-08',
        last_seen: '2025-12-08',
        accession: 'a',
        source_kind: 'ownership',
      },
      {
        person_key: 'cik1',
        cik: 5,
        person_name: 'Daniel A Jones',
        role: 'Director',
        role_type: 'director',
        first_seen: '2025-12-08',
        last_seen: '2025-12-08',
        accession: 'a',
        source_kind: 'ownership',
      },
      {
        person_key: 'cik1',
        cik: 5,
        person_name: 'Daniel A. Jones',
        role: 'President and Chief Executive Officer',
        role_type: 'executive_officer',
        first_seen: '2025-11-22',
        last_seen: '2025-11-22',
        accession: 'b',
        source_kind: '10-K',
      },
    ];
    const merged = mergeSameRoles(rows);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({
      person_name: 'Daniel A. Jones',
      role: 'President and Chief Executive Officer',
      role_type: 'executive_officer',
      first_seen: '2025-11-22',
      last_seen: '2025-12-08',
      accession: 'b',
      also_reported_as: [{ name: 'Daniel A Jones', role: 'President and CEO', accession: 'a', source: 'ownership' }],
    });
    expect(merged[1]).toBe(rows[1]);
    // Another company's CEO role stays its own row.
    expect(mergeSameRoles([rows[0]!, { ...rows[2]!, cik: 6 }])).toHaveLength(2);
  });

  it('writes a career period as a string', () => {
    expect(periodText('2025-11-22', '2025-12-08')).toBe('2025-11-22 to 2025-12-08');
    expect(periodText('2025-11-22', '2025-11-22')).toBe('2025-11-22');
    expect(periodText(null, null)).toBe('unknown');
  });

  it('phrases every status of spec 000 grammatically', () => {
    for (const s of ['active', 'inactive', 'acquired', 'delisted', 'other']) expect(statusPhrase(s)).not.toMatch(/\ba [aeiou]/);
    expect(statusPhrase('inactive')).toBe('is an inactive SEC registrant');
    expect(statusPhrase('acquired')).toMatch(/^is a former SEC registrant/);
  });

  it('notes a person the way search indexes them', () => {
    expect(personNotes({ roles: ['Director', 'Director'], companies: ['A Inc.', 'B Corp'], sources: ['ownership', 'ownership'] })).toBe(
      '2 roles at 2 companies (A Inc., B Corp): Director; from Forms 3/4/5',
    );
  });
});
