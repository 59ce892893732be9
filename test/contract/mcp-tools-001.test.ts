/**
 * Contract: the MCP table of the vetting specification (../shared/spec/001_2c993ec8aa6fda8f.txt, "MCP"),
 * transcribed as tool → parameters, checked against the input schemas `tools/list` publishes (the same
 * `toolJsonSchema` the server lists). A renamed, dropped or undescribed parameter, a parameter the
 * specification makes required that turned optional (or the reverse), or a tool that stopped rejecting
 * unknown arguments fails here naming the tool, the parameter and the specification.
 */
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../../service/mcp/mcp.queries.ts';
import { toolJsonSchema } from '../../service/mcp/tool-kit.ts';

const SPEC = '001_2c993ec8aa6fda8f.txt: MCP';

/** [tool, parameters the table names, which of them are required]. "a or b" parameters are each optional. */
const MCP_TABLE: Array<[string, string[], string[]]> = [
  ['freight_carrier_lookup', ['dot_number', 'mc_number', 'name'], []],
  ['freight_carrier_safety', ['dot_number'], ['dot_number']],
  ['freight_carrier_vet', ['dot_number', 'broker_id'], ['dot_number']],
  ['freight_crash_history', ['dot_number', 'limit'], ['dot_number']],
  ['freight_inspection_history', ['dot_number', 'limit'], ['dot_number']],
  ['freight_enforcement_history', ['dot_number'], ['dot_number']],
  ['freight_vetting_history', ['dot_number', 'vetting_id'], []],
  ['freight_compare_carriers', ['dot_numbers'], ['dot_numbers']],
  ['freight_red_flag_search', ['state', 'min_risk', 'safety_rating'], []],
  ['freight_crash_by_vin', ['vin'], ['vin']],
  ['freight_status', [], []],
  ['freight_attestation', [], []],
];

describe(`contract ${SPEC}`, () => {
  const byName = new Map(TOOLS.map((t) => [t.name, t]));

  it('serves exactly the twelve tools of the table (freight_*)', () => {
    expect(TOOLS.filter((t) => t.name.startsWith('freight_')).map((t) => t.name)).toEqual(MCP_TABLE.map(([name]) => name));
  });

  it.each(MCP_TABLE)('%s takes the parameters of the table', (name, params, required) => {
    const tool = byName.get(name);
    expect(tool, `${SPEC}: tool ${name}`).toBeDefined();
    const schema = toolJsonSchema(tool!.input, 'input') as {
      properties?: Record<string, { description?: string }>;
      required?: string[];
      additionalProperties?: unknown;
    };
    const violations: string[] = [];
    for (const p of params) {
      const prop = schema.properties?.[p];
      if (!prop) violations.push(`${SPEC}: ${name}.${p} is missing`);
      else if (!prop.description) violations.push(`${SPEC}: ${name}.${p} has no description`);
      const isRequired = (schema.required ?? []).includes(p);
      if (isRequired !== required.includes(p))
        violations.push(`${SPEC}: ${name}.${p} should be ${required.includes(p) ? 'required' : 'optional'}`);
    }
    if (schema.additionalProperties !== false) violations.push(`${SPEC}: ${name} accepts unknown parameters`);
    expect(violations).toEqual([]);
  });
});
