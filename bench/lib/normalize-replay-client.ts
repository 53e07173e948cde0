/**
 * Worker: the client side of the normalize benchmark's replay phase, in its own process so its
 * parsing does not run on the server's event loop. Two readers of the same cache:
 *
 * - `sse`: GET /mcp/caches/stream/{key} over raw `http`, read to `event: end`; the parser only
 *   counts lines that start with `id:` (Buffer.indexOf of "\nid:", carrying 3 bytes across chunks).
 * - `push`: a raw ordered push consumer on `cache.<key>` with a callback that counts messages
 *   (no decode), until it has the cache's last sequence.
 */
import { Agent, get } from 'node:http';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { cacheFilter } from '../../contracts/caches.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { serveWorker } from './ipc.ts';
import { ProcStats } from './proc-stats.ts';
import { countWithPushConsumer, pushCountFields } from './push-count.ts';

const ID = Buffer.from('\nid:');
const END = Buffer.from('\nevent: end\n');
const CARRY = END.length - 1;

const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const proc = new ProcStats();

type SseArgs = { url: string; apiKey: string; expected: number; timeoutMs: number };
type PushArgs = {
  natsUrl: string;
  accountId: string;
  cacheKey: string;
  expected: number;
  lastSeq: number;
  timeoutMs: number;
};

serveWorker({
  async sse(args: SseArgs) {
    proc.reset();
    const t0 = performance.now();
    let firstByteAt = 0;
    let endAt = 0;
    let events = 0;
    let bytes = 0;
    let status = 0;
    // Bytes kept from the previous chunk so that a marker cut by a chunk boundary is still seen;
    // starts with "\n" so that an `id:` at the very start of the body counts too.
    let carry: Buffer = Buffer.from('\n');
    let error: string | null = null;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        error = 'timeout';
        req.destroy();
        resolve();
      }, args.timeoutMs);
      const req = get(
        args.url,
        { agent, headers: { accept: 'text/event-stream', 'x-api-key': args.apiKey } },
        (res) => {
          status = res.statusCode ?? 0;
          res.on('data', (chunk: Buffer) => {
            if (!firstByteAt) firstByteAt = performance.now();
            bytes += chunk.length;
            const buf = Buffer.concat([carry, chunk]);
            // Markers lying wholly inside `carry` were counted with the previous chunk.
            let from = 0;
            for (;;) {
              const i = buf.indexOf(ID, from);
              if (i < 0) break;
              if (i + ID.length > carry.length) events++;
              from = i + 1;
            }
            if (!endAt && buf.indexOf(END, Math.max(0, carry.length - CARRY)) >= 0) {
              endAt = performance.now();
              clearTimeout(timer);
              res.destroy();
              resolve();
              return;
            }
            carry = buf.subarray(Math.max(0, buf.length - CARRY));
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve();
          });
          res.on('error', () => resolve());
        },
      );
      req.on('error', (e) => {
        error = String(e);
        clearTimeout(timer);
        resolve();
      });
    });
    const ms = (endAt || performance.now()) - t0;
    return {
      status,
      completed: endAt > 0 && events === args.expected,
      events,
      bytes,
      seconds: Math.round(ms) / 1_000,
      first_byte_ms: firstByteAt ? Math.round(firstByteAt - t0) : null,
      events_per_s: Math.round(events / (ms / 1_000)),
      mb_per_s: Math.round((bytes / 1_048_576 / (ms / 1_000)) * 10) / 10,
      client_proc: proc.read(),
      ...(error ? { error } : {}),
    };
  },

  async push(args: PushArgs) {
    const nc = await connect({ servers: args.natsUrl, name: 'bench-normalize-push', noAsyncTraces: true });
    try {
      proc.reset();
      const r = await countWithPushConsumer(
        jetstream(nc),
        STREAMS.CACHE,
        cacheFilter(args.accountId, args.cacheKey),
        args.lastSeq,
        args.timeoutMs,
      );
      return {
        completed: r.reachedTarget && r.events === args.expected,
        ...pushCountFields(r),
        client_proc: proc.read(),
      };
    } finally {
      await nc.close();
    }
  },
});
