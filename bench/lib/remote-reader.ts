/**
 * The clients of bench/lib/replay-clients.ts in a process of their own (a client is remote: in the
 * benchmark's process it would share one event loop with the edges it measures). `first` opens
 * one stream (a replay from an instant, or a resume after a position) and answers the milliseconds
 * to its first event, measured here; `read` reads a catch-up or a replay to its end and answers
 * its events/s.
 */
import { serveWorker } from './ipc.ts';
import { firstEvent, type ReadSpec, read, type Start, type Transport } from './replay-clients.ts';

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
});
