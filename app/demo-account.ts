/**
 * Development convenience: a demo account (Quant, Japan access) with one API key, printed and
 * written to `DATA_DIR/demo-api-key`, so the quick start needs no manual step. Reused across
 * restarts while the key is still valid. Never runs outside development mode.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AccountBuckets } from '../consumers/accounts/projector.ts';
import type { KeyRecord } from '../contracts/accounts.ts';
import type { Secrets } from '../platform/secrets.ts';
import type { AccountsService } from '../producers/accounts/service.ts';

export const DEMO_EMAIL = 'demo@localhost.test';

export async function ensureDemoKey(
  dataDir: string,
  accounts: AccountsService,
  buckets: AccountBuckets,
  secrets: Secrets,
): Promise<string> {
  const file = join(dataDir, 'demo-api-key');
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    const rec = (await buckets.keys.get(secrets.keyHash(key))) as KeyRecord | null;
    if (rec?.status === 'active') return announce(key, file);
  }
  const accountId = await accounts.ensureSystemAccount({
    email: DEMO_EMAIL,
    password: `Demo-${randomBytes(12).toString('hex')}`,
    plan: 'quant',
    jp_access: true,
    source: 'development',
  });
  const created = await accounts.createKey(
    accountId,
    { name: 'development demo key', scopes: [] },
    { trusted: true },
  );
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${created.key}\n`, { mode: 0o600 });
  return announce(created.key, file);
}

function announce(key: string, file: string): string {
  process.stdout.write(
    `\nDevelopment API key (demo account, Quant, Japan access), written to ${file}:\n  ${key}\n` +
      `This is a development key for local use only.\n  curl -N -H "x-api-key: ${key}" 'http://127.0.0.1:8081/api/v1/unified/stream?coin=BTC'\n\n`,
  );
  return key;
}
