/**
 * `npm run operator -- grant|revoke <email>`: the one way to make (or unmake) an operator. Run on
 * the service's side with its NATS URL and credentials (`NATS_URL`, `NATS_USER`/`NATS_PASSWORD`,
 * `NATS_CREDS_FILE`… as every role reads them): the right to publish on `ACCOUNTS` is what makes
 * the act local. Prints the account id and its operator flag as JSON; exit code 1 on failure.
 */
import { openAccountBuckets } from '../consumers/accounts/projector.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { connectNats } from '../platform/nats.ts';
import { natsAuthOptions } from '../platform/nats-auth.ts';
import { setOperator } from '../producers/accounts/operator.ts';

const USAGE = 'usage: operator grant|revoke <email>   (NATS_URL and the NATS credentials of the service)';

async function main(): Promise<void> {
  const [verb, email, ...extra] = process.argv.slice(2);
  if ((verb !== 'grant' && verb !== 'revoke') || !email || extra.length > 0) throw new Error(USAGE);
  const config = loadConfig();
  if (!config.NATS_URL) throw new Error(`NATS_URL is not set\n${USAGE}`);
  const log = createLogger(config.LOG_LEVEL, 'operator');
  const nats = await connectNats(config.NATS_URL, 'mdp-operator', log, natsAuthOptions(config));
  try {
    const buckets = await openAccountBuckets(nats);
    const result = await setOperator(
      nats,
      buckets.accounts,
      email,
      verb === 'grant',
      config.ACCOUNT_PROJECTION_DEADLINE_MS,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await nats.nc.close();
  }
}

main().catch((err) => {
  process.stderr.write(`operator: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
