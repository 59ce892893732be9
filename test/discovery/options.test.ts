/** Configuration → discovery options (ORG_*, DISCOVERY_SECP256K1_KEY_PATH). */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { discoveryOptions } from '../../service/discovery/discovery.options.ts';

describe('discoveryOptions', () => {
  it('maps ORG_* and treats the default ORG_DOMAIN as unset (the public host is used)', () => {
    const d = discoveryOptions(loadConfig({}));
    expect(d.org).toMatchObject({ name: 'Proofline', domain: undefined, sectors: ['financial-data', 'freight', 'provenance'] });
    expect(d.discoveryKeyPath).toBeUndefined();
    const c = discoveryOptions(
      loadConfig({
        ORG_NAME: 'Acme',
        ORG_DOMAIN: 'acme.example',
        ORG_MISSION: 'm',
        ORG_SECTOR: 'a, b',
        DISCOVERY_SECP256K1_KEY_PATH: 'keys/k.hex',
      }),
    );
    expect(c.org).toEqual({ name: 'Acme', domain: 'acme.example', mission: 'm', sectors: ['a', 'b'] });
    expect(c.discoveryKeyPath).toBe(path.resolve('keys/k.hex'));
  });
});
