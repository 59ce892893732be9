import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';

describe('loadConfig', () => {
  it('works with an empty environment (embedded defaults)', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c).toMatchObject({
      PORT: 8787,
      dataDir: '/srv/app/data',
      inputDir: '/srv/app/data/sample/small',
      usesSample: true,
      SEC_RATE_LIMIT: 9,
    });
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.signingKeyPath).toBe('/srv/app/data/keys/ed25519.pem');
  });
  it('treats empty strings as unset', () => {
    expect(loadConfig({ REDIS_URL: '', PORT: '' }).REDIS_URL).toBeUndefined();
  });
  it('names every invalid variable', () => {
    try {
      loadConfig({ PORT: 'eighty', SEC_RATE_LIMIT: '11', REDIS_URL: 'http://x', SEC_USER_AGENT: 'curl' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      for (const v of ['PORT', 'SEC_RATE_LIMIT', 'REDIS_URL', 'SEC_USER_AGENT']) expect(msg).toContain(v);
    }
  });
  it('uses INPUT_DIR instead of the sample when given', () => {
    expect(loadConfig({ INPUT_DIR: '/in' })).toMatchObject({ inputDir: '/in', usesSample: false });
  });
});
