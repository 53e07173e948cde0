/**
 * The clients of bench/lib/replay-clients.ts in a process of their own (a client is remote: in the
 * benchmark's process it would share one event loop with the edges it measures). `first` opens
 * one stream (a replay from an instant, or a resume after a position) and answers the milliseconds
 * to its first event, measured here; `read` reads a catch-up or a replay to its end and answers
 * its events/s; `raw` reads `MD` from its start to `last` with a raw ordered JetStream consumer
 * on the NATS at `url`, no edge between (the floor under any edge's catch-up there).
 */
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import { serveWorker } from './ipc.ts';
import {
  firstEvent,
  type Read,
  type ReadSpec,
  rate,
  read,
  type Start,
  type Transport,
} from './replay-clients.ts';

const log = createLogger('silent', 'bench');

async function raw(url: string, last: number): Promise<Read> {
  const nats = await connectNats(url, 'bench-raw-reader', log);
  try {
    const t0 = performance.now();
    let events = 0;
    await new Promise<void>((resolve) => {
      const reader = readOrdered(
        nats,
        { stream: 'MD', filter: '', startSeq: 1, paced: true },
        (_m, seq) => {
          events++;
          if (seq >= last) {
            reader.stop();
            resolve();
          }
        },
        log,
      );
    });
    return rate(events, t0);
  } finally {
    await nats.nc.close();
  }
}

serveWorker({
  first: ({
    transport,
    address,
    start,
    open,
  }: {
    transport: Transport;
    address: string;
    start: Start;
    open?: boolean;
  }) => firstEvent(transport, address, start, { open: open ?? false }),
  read: ({ transport, address, spec }: { transport: Transport; address: string; spec: ReadSpec }) =>
    read(transport, address, spec),
  raw: ({ url, last }: { url: string; last: number }) => raw(url, last),
});
