import { describe, expect, it } from 'vitest';
import { type ContractTable, checkShape } from './shape.js';

const table: ContractTable = {
  spec: 'example spec: vetting record',
  fields: [
    { path: 'carrier', type: 'string', required: true },
    { path: 'red_flags[]', type: 'string', required: false },
    { path: 'identity.cik', type: 'digits', required: true },
    { path: 'score', type: 'number', required: false, nullable: true },
  ],
};

describe('the contract shape checker', () => {
  it('accepts an answer that speaks the table', () => {
    expect(checkShape({ carrier: 'ACME', red_flags: ['oos'], identity: { cik: '0000320193' }, score: null }, table)).toEqual([]);
  });

  it('names the field and the specification for every type broken', () => {
    const problems = checkShape({ carrier: { name: 'ACME' }, red_flags: [{ code: 'oos' }], identity: { cik: 320193 } }, table);
    expect(problems).toEqual([
      'example spec: vetting record: carrier should be string, got {"name":"ACME"} (at carrier)',
      'example spec: vetting record: red_flags[] should be string, got {"code":"oos"} (at red_flags[0])',
      'example spec: vetting record: identity.cik should be digits, got 320193 (at identity.cik)',
    ]);
  });

  it('reports a required field that is missing and a null the table does not allow', () => {
    expect(checkShape({ carrier: null, identity: {} }, table)).toEqual([
      'example spec: vetting record: carrier is null, the specification says string (at carrier)',
      'example spec: vetting record: identity.cik is required but missing (at identity.cik)',
    ]);
  });
});
