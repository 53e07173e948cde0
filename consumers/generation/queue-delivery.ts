/**
 * Delivery rules of the `JOBS` work queue, the same for jobs and window tasks.
 *
 * JetStream never gives up on a task (`max_deliver: -1`). A consumer with a delivery limit drops
 * a message silently after its last delivery: if the worker holding that delivery died before
 * recording anything, whoever waits for the task's outcome (the job's coordinator watching its
 * windows, a client polling the job) would wait forever. The limit is the application's instead
 * (`JOB_MAX_DELIVERIES`): the worker that receives a task for attempt limit + 1 records the
 * failure and terminates the message; if it dies first, the next delivery does the same.
 *
 * An attempt is a delivery whose worker went away without a word (crash, kill -9, lost host). A
 * graceful stop is not one: the stopping worker hands the task over by publishing it again as a
 * new message, carrying the attempts used so far in a header, then acks the old one (a `nak()`
 * would count as a delivery). The copy's msgID is `<subject>.h<stream sequence of the old
 * message>`: the task's own msgID is still inside the duplicate window (JetStream would drop the
 * copy), and two holders of the same message (one outlived its ack wait) hand it over only once.
 * Should the copy and the old message both run, a window's second run finds its outcome recorded
 * (and the parts are deterministic anyway), a job's finds it ended.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { AckPolicy } from '@nats-io/jetstream';
import { headers, nanos } from '@nats-io/transport-node';
import { PRIOR_ATTEMPTS_HEADER } from '../../contracts/jobs.ts';
import { redeliveryMsgId } from '../../contracts/message-ids.ts';
import { STREAMS } from '../../contracts/streams.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { isNotReady, patiently } from '../../platform/patient.ts';

/**
 * Creates a work-queue consumer of `JOBS` for `filter`, or updates an existing one's limits (one
 * created by an older release with a delivery limit gets none), patiently (platform/patient.ts).
 */
export async function ensureQueueConsumer(
  nats: Nats,
  durable: string,
  filter: string,
  ackWaitMs: number,
): Promise<void> {
  const limits = { ack_wait: nanos(ackWaitMs), max_deliver: -1 };
  await patiently(`consumer ${durable}`, () =>
    nats.jsm.consumers
      .add(STREAMS.JOBS, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        filter_subject: filter,
        ...limits,
      })
      .catch(async (err: unknown) => {
        if (isNotReady(err)) throw err;
        await nats.jsm.consumers.update(STREAMS.JOBS, durable, limits);
      }),
  );
}

/** The attempt this delivery is (1-based): earlier copies' attempts plus this message's deliveries. */
export function attemptOf(msg: JsMsg): number {
  const prior = Number(msg.headers?.get(PRIOR_ATTEMPTS_HEADER) || 0);
  return (Number.isSafeInteger(prior) && prior > 0 ? prior : 0) + msg.info.deliveryCount;
}

/**
 * A graceful stop: the task goes back on the queue as a fresh message that keeps the attempts
 * used before this one, then the old message is acked. If the copy cannot be published, the old
 * message is nak'ed instead (redelivered at once, as one more attempt).
 */
export async function handOver(nats: Nats, msg: JsMsg, log: Logger): Promise<void> {
  const h = headers();
  h.set(PRIOR_ATTEMPTS_HEADER, String(attemptOf(msg) - 1));
  const msgID = redeliveryMsgId(msg.subject, msg.info.streamSequence);
  try {
    await nats.js.publish(msg.subject, msg.data, { msgID, headers: h });
  } catch (err) {
    log.warn({ err: String(err), subject: msg.subject }, 'hand-over failed: the task is redelivered');
    msg.nak();
    return;
  }
  // Lost, the ack only means the old message comes back after the ack wait too (see above).
  await msg
    .ackAck()
    .catch((err) => log.warn({ err: String(err), subject: msg.subject }, 'hand-over ack failed'));
  log.info({ subject: msg.subject, attempt: attemptOf(msg) }, 'task handed over (shutting down)');
}
