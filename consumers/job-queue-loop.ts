/**
 * The one loop of every job worker on the `JOBS` work queue (generation, export): one message at a
 * time from a durable pull consumer, handled before the next is asked for; a failed fetch (NATS
 * away, the consumer being recreated) is logged and retried after a short pause, until `signal`
 * aborts. Resolves when the loop has ended.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { STREAMS } from '../contracts/streams.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';

/** How long one pull waits for a job, and the pause after a failed fetch (ms). */
const PULL_EXPIRES_MS = 2_000;
const RETRY_PAUSE_MS = 500;

export async function runJobQueue(
  nats: Nats,
  durable: string,
  handle: (msg: JsMsg) => Promise<void>,
  log: Logger,
  what: string,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const consumer = await nats.js.consumers.get(STREAMS.JOBS, durable);
      const msg = await consumer.next({ expires: PULL_EXPIRES_MS });
      if (msg) await handle(msg);
    } catch (err) {
      if (!signal.aborted) {
        log.warn({ err: String(err) }, `${what}: fetch failed`);
        await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
      }
    }
  }
}
