/**
 * V8 settings of every service process (imported first by app/main.ts, and by bench/run.ts so the
 * benchmarks measure what runs in production; bench workers get the same flag on their command
 * line, bench/lib/ipc.ts).
 *
 * `--no-allocation-site-pretenuring`: V8 watches how many objects of each allocation site survive
 * a young-generation collection and, past a threshold, allocates that site's objects straight in
 * the old generation from then on. A batch of normalized events (the venue mappers' book and trade
 * objects, held until the batch is encoded) can survive one collection when it happens mid-batch;
 * the sites were then pretenured for good, and every later event of the process cost a major
 * collection's share: `bench normalize`'s book kinds ran at 0.46–0.89× tardis-dev in about half of
 * the processes and 1.1–1.7× in the rest, with the collector's share 28 % against 16 % (the same
 * code; docs/benchmarks.md, 2026-11-28 22:40). Every object the services make per event is
 * short-lived by design, so nothing here gains from pretenuring.
 *
 * Set at start, before any event is handled: the flag is read at each collection.
 */
import { setFlagsFromString } from 'node:v8';

export const V8_FLAGS = ['--no-allocation-site-pretenuring'];

for (const flag of V8_FLAGS) setFlagsFromString(flag);
