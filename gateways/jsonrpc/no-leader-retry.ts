/**
 * Filter-slot writes that wait out a stream leader election instead of failing at once.
 *
 * After the node leading the filter bucket's stream dies, nats-server answers a publish to the
 * bucket with "no responders" until a new leader is elected (3-7 s on the 3-node test cluster):
 * md_newFilter on a key with a free slot failed -32603 for that long (issue 13). Such a write
 * reached no server, so nothing was stored and sending it again with the same Nats-Msg-Id is safe:
 * the compare-and-swap (platform/kv-cas.ts) is unchanged. Only that error is retried, within
 * `withinMs`, so that a call still ends inside its own deadline; past it the write fails
 * `upstream_timeout` (-32009, retryable), not `internal`. A timeout is never retried: that
 * write may have been stored, and the same id sent again would be a duplicate, read as a lost race.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestError } from '@nats-io/transport-node';
import { ApiError } from '../../contracts/errors.ts';
import type { CasWriter } from '../../platform/kv-cas.ts';

/** First wait after "no responders", ms; doubled up to MAX_WAIT_MS. */
const FIRST_WAIT_MS = 100;
const MAX_WAIT_MS = 800;

/** Whether `err` is a JetStream publish that no server took ("no responders": no stream leader). */
export function isNoLeader(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++)
    if (e instanceof RequestError && e.isNoResponders()) return true;
  return false;
}

async function retried<T>(write: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, MAX_WAIT_MS)) {
    try {
      return await write();
    } catch (err) {
      if (!isNoLeader(err)) throw err;
      if (Date.now() + wait > deadline)
        throw new ApiError(
          'upstream_timeout',
          `the filter store elected no leader within ${withinMs} ms`,
          undefined,
          {
            cause: err,
          },
        );
      await sleep(wait);
    }
  }
}

/** `cas` whose writes are sent again while the bucket's stream has no leader, for up to `withinMs`. */
export function retryingWithoutLeader(cas: CasWriter, withinMs: number): CasWriter {
  return {
    create: (key, value) => retried(() => cas.create(key, value), withinMs),
    update: (key, value, revision) => retried(() => cas.update(key, value, revision), withinMs),
    remove: (key, revision) => retried(() => cas.remove(key, revision), withinMs),
  };
}
