/**
 * The live benches' publisher in a process of its own (bench/lib/ipc.ts worker): 1,000 events/s
 * (or the rate asked) through the real `publishEvents` (bench/lib/feed.ts `publishAtRate`) on a connection of its own,
 * as the platform's producers publish from a process other than the gateways'. Its JetStream acks
 * are handled here, not in the bench process, whose event loop carries the readers being timed.
 * `skew` is this process's wall clock minus the machine's monotonic clock, so that the bench turns
 * a `publish_us` stamped here into its own clock exactly.
 */
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { publishAtRate } from './feed.ts';
import { serveWorker, sleep } from './ipc.ts';
import { clockSkewUs } from './live-latency.ts';

let nats: Nats | null = null;

serveWorker(
  {
    async connect({ url }: { url: string }) {
      nats = await connectNats(url, 'bench-live-publisher', createLogger('silent', 'bench'));
    },
    skew: () => clockSkewUs(),
    async publish({ seconds, perSecond = 1_000 }: { seconds: number; perSecond?: number }) {
      if (!nats) throw new Error('not connected');
      const pub = publishAtRate(nats, perSecond);
      await sleep(seconds * 1_000);
      return pub.stop();
    },
  },
  async () => {
    await nats?.nc.close();
  },
);
