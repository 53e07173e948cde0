/**
 * The time-to-first-event client of `bench/replay.ts`, in a process of its own (a client is
 * remote: in the benchmark's process it would share one event loop with the edges it measures).
 * `first` opens one stream (a replay from an instant, or a resume after a position) and answers
 * the milliseconds to its first event, measured here.
 */
import { serveWorker } from './ipc.ts';
import { firstEvent, type Start, type Transport } from './replay-clients.ts';

serveWorker({
  first: ({ transport, address, start }: { transport: Transport; address: string; start: Start }) =>
    firstEvent(transport, address, start),
});
