import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.ts';
import { redactUrl } from '../../platform/logger.ts';

describe('config', () => {
  it('has local defaults for everything', () => {
    const c = loadConfig({ NODE_ENV: 'development' });
    expect(c.UNIFIED_PORT_US).toBe(8081);
    expect(c.UNIFIED_PORT_JP).toBe(9081);
    expect([c.JSONRPC_PORT_US, c.JSONRPC_PORT_JP]).toEqual([8545, 9545]);
    expect(c.COINS).toEqual(['BTC', 'ETH', 'SOL', 'HYPE']);
    expect(c.NATS_URL).toBeUndefined();
  });

  it('applies production rules when NODE_ENV is unset: the default secret is refused', () => {
    expect(() => loadConfig({})).toThrow(/API_KEY_SECRET/);
    expect(loadConfig({ API_KEY_SECRET: 'a-secret-of-our-own-1234' }).NODE_ENV).toBe('production');
    expect(loadConfig({ NODE_ENV: 'development' }).NODE_ENV).toBe('development');
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ UNIFIED_PORT_US: 'x', SIM_BOOK_INTERVAL_MS: '7' })).toThrow(
      /UNIFIED_PORT_US[\s\S]*SIM_BOOK_INTERVAL_MS/,
    );
  });

  it('refuses a disk-sync ping longer than a third of the lease TTL (a holder must be able to renew twice)', () => {
    const dev = { NODE_ENV: 'development' };
    expect(() => loadConfig({ ...dev, DISKSYNC_PING_INTERVAL_MS: '20000' })).toThrow(
      /DISKSYNC_PING_INTERVAL_MS: at most a third of DISKSYNC_LEASE_TTL_MS/,
    );
    expect(
      loadConfig({ ...dev, DISKSYNC_PING_INTERVAL_MS: '1000', DISKSYNC_LEASE_TTL_MS: '3000' }),
    ).toMatchObject({
      DISKSYNC_PING_INTERVAL_MS: 1000,
    });
  });

  it('redacts api_key from logged URLs', () => {
    expect(redactUrl('/ws?coin=BTC&api_key=mdp_secret&x=1')).toBe('/ws?coin=BTC&api_key=[redacted]&x=1');
  });
});
