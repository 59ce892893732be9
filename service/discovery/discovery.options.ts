/** Maps configuration (ORG_*, DISCOVERY_SECP256K1_KEY_PATH) onto the discovery fields of ServiceOptions. */
import path from 'node:path';
import type { Config } from '../../lib/config.ts';
import type { ServiceOptions } from '../platform/deps.ts';

export function discoveryOptions(config: Config): Pick<ServiceOptions, 'org' | 'discoveryKeyPath'> {
  return {
    org: {
      name: config.ORG_NAME,
      // The config default "localhost" means "not set": the manifest then names the public base URL's host.
      domain: config.ORG_DOMAIN === 'localhost' ? undefined : config.ORG_DOMAIN,
      mission: config.ORG_MISSION,
      sectors: config.orgSectors,
    },
    discoveryKeyPath: config.DISCOVERY_SECP256K1_KEY_PATH ? path.resolve(config.DISCOVERY_SECP256K1_KEY_PATH) : undefined,
  };
}
