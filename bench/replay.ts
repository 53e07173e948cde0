/**
 * `npm run bench -- replay` (issue 31 §1): a replay by time at speed `max` on each streaming
 * transport against the same transport's catch-up, in the same run, on the same edges (one
 * process, one private nats-server, open guard; JSON on stdout).
 * - Throughput: BENCH_REPLAY_EVENTS stored events (default 1,000,000) read by one client from
 *   `from` = the stream's first stored time to `to` = its last (the replay, ended by the server
 *   after `replay_complete`) and by the same client resuming after 0 until the last sequence
 *   (the catch-up). BENCH_REPLAY_ROUNDS rounds (default 3), the order swapped every other round;
 *   every run printed, the ratio of medians (replay ÷ catch-up events/s; goal ≥ 0.9×).
 * - Time to first event: BENCH_REPLAY_FIRST_SAMPLES replays (default 100) per transport from a
 *   random instant within what the stream holds (seeded; the seed is printed), from the request
 *   to the first event; p50/p99/max (goal p99 ≤ 50 ms), each beside a resume by position from
 *   a sequence at the same place in the stream (Last-Event-ID, after_seq, from_seq: the baseline
 *   without the time lookup); the client in a process of its own (bench/lib/remote-reader.ts);
 *   and the floor under both: a raw JetStream consumer at the same sequence and its first message.
 *   The three take turns at going first at each place (the first pays for loading its stored
 *   block); p99 is the nearest rank (of 100 samples the 99th, not the largest).
 * Clients: bench/lib/replay-clients.ts (they count, they do not decode).
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { openGuard } from '../gateways/core/guard.ts';
import { LatestState } from '../gateways/core/latest-state.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { disksyncSettings } from '../gateways/disksync/app.ts';
import { KeyLeases } from '../gateways/disksync/lease.ts';
import { buildGrpcApp } from '../gateways/grpc/app.ts';
import { buildUnifiedApp } from '../gateways/unified/app.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { listenOpenDisksync } from '../test/support/disksync.ts';
import { benchConfig } from './lib/config.ts';
import { fillMdStream, resetMdStream, startBenchNats } from './lib/feed.ts';
import { startWorker } from './lib/ipc.ts';
import { type Read, read, type Transport } from './lib/replay-clients.ts';
import { median, percentile } from './lib/stats.ts';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_REPLAY_ROUNDS ?? 3);
const FIRST_SAMPLES = Number(process.env.BENCH_REPLAY_FIRST_SAMPLES ?? 100);
const SEED = Number(process.env.BENCH_SEED ?? 1 + Math.floor(Math.random() * 2_147_483_645));

const log = createLogger('silent', 'bench');
const progress = (line: string) => process.stderr.write(`  ${line}\n`);
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The floor under any first event: a raw JetStream consumer created at `after + 1` in this process
 * and its first message, ms. nats-server loads the stored block holding that sequence when it is not
 * in its cache (8 MB blocks on 2.9: tens of ms), which no gateway can avoid.
 */
async function rawFirst(nats: Nats, after: number): Promise<number> {
  const t0 = performance.now();
  const info = await nats.jsm.consumers.add('MD', {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: after + 1,
    ack_policy: AckPolicy.None,
    mem_storage: true,
    inactive_threshold: nanos(5_000),
  });
  const messages = await (await nats.js.consumers.get('MD', info.name)).fetch({ max_messages: 1 });
  for await (const _ of messages) break;
  const ms = performance.now() - t0;
  await nats.jsm.consumers.delete('MD', info.name).catch(() => {});
  return ms;
}

export async function run() {
  const bench = await startBenchNats();
  const { nats } = bench;
  const config = benchConfig();
  try {
    await resetMdStream(nats);
    process.stderr.write(`filling ${EVENTS}…\n`);
    await fillMdStream(nats, EVENTS);
    const { state } = await nats.jsm.streams.info('MD');
    const firstMs = Date.parse(state.first_ts);
    const lastMs = Date.parse(state.last_ts) + 1;
    const tail = await LiveTail.start(nats, log, {
      ringSize: config.SSE_RING_SIZE,
      staleAfterMs: 60_000,
      expectedCoins: ['BTC'],
    });
    const latest = await LatestState.start(nats, tail, log);
    const unified = buildUnifiedApp({ config, nats, tail, guard: openGuard, log, region: 'us' });
    const sseUrl = await unified.app.listen({ host: '127.0.0.1', port: 0 });
    const grpc = buildGrpcApp({ config, nats, tail, latest, guard: openGuard, log, region: 'us' });
    const grpcTarget = `127.0.0.1:${await grpc.listen('127.0.0.1', 0)}`;
    const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
    const disk = await listenOpenDisksync({ nats, tail, leases, log, settings: disksyncSettings(config) });
    const address: Record<Transport, string> = { sse: sseUrl, grpc: grpcTarget, disksync: disk.url };

    const throughput: Record<string, unknown> = {};
    for (const t of ['sse', 'grpc', 'disksync'] as Transport[]) {
      const runs: { catch_up: Read[]; replay: Read[] } = { catch_up: [], replay: [] };
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? (['catch_up', 'replay'] as const) : (['replay', 'catch_up'] as const);
        for (const kind of order) {
          const spec =
            kind === 'catch_up'
              ? { kind: 'catchup' as const, last: state.last_seq }
              : { kind: 'replay' as const, from: firstMs, to: lastMs };
          const got = await read(t, address[t], spec);
          runs[kind].push(got);
          progress(`${t} ${kind}: ${got.events} events, ${got.events_per_s}/s`);
        }
      }
      const ratio = round3(
        median(runs.replay.map((x) => x.events_per_s)) / median(runs.catch_up.map((x) => x.events_per_s)),
      );
      const complete = runs.replay.every((x) => x.events === state.messages);
      throughput[t] = { runs, ratio_replay_vs_catch_up: ratio, every_replay_complete: complete };
      progress(`${t}: replay ÷ catch-up ${ratio}${complete ? '' : ' (a replay missed events!)'}`);
    }

    let s = SEED % 2_147_483_647 || 1;
    const random = () => {
      s = (s * 48_271) % 2_147_483_647;
      return s / 2_147_483_647;
    };
    const first: Record<string, unknown> = {};
    const summary = (ms: number[]) => ({
      p50_ms: round3(percentile(ms, 50)),
      p99_ms: round3(percentile(ms, 99)),
      max_ms: round3(Math.max(...ms)),
    });
    // The client runs in a process of its own, as a remote client would (bench/lib/remote-reader.ts).
    const client = await startWorker('remote-reader');
    for (const t of ['sse', 'grpc', 'disksync'] as Transport[]) {
      // Alternating: a replay from a random instant, a resume after a random sequence (the baseline).
      const byTime: number[] = [];
      const byPosition: number[] = [];
      const raw: number[] = [];
      const byTimeOpen: number[] = [];
      for (let i = 0; i < FIRST_SAMPLES; i++) {
        const at = random();
        const from = firstMs + Math.floor(at * (lastMs - firstMs));
        const after = state.first_seq + Math.floor(at * (state.last_seq - state.first_seq));
        const samples = [
          async () =>
            byTime.push(
              await client.call<number>('first', { transport: t, address: address[t], start: { from } }),
            ),
          async () =>
            byPosition.push(
              await client.call<number>('first', { transport: t, address: address[t], start: { after } }),
            ),
          async () => raw.push(await rawFirst(nats, after)),
          // gRPC also on a channel already open, as a client holding one asks (and as the raw
          // consumer's connection is): the rest is the edge's.
          ...(t === 'grpc'
            ? [
                async () =>
                  byTimeOpen.push(
                    await client.call<number>('first', {
                      transport: t,
                      address: address[t],
                      start: { from },
                      open: true,
                    }),
                  ),
              ]
            : []),
        ];
        // The first to read a place pays for loading its stored block: each goes first a third of the time.
        for (let k = 0; k < samples.length; k++)
          await (samples[(i + k) % samples.length] as () => Promise<number>)();
      }
      const time = summary(byTime);
      const position = summary(byPosition);
      first[t] = {
        samples: byTime.length,
        from_time: time,
        resume_by_position: position,
        p50_vs_resume: round3(time.p50_ms / position.p50_ms),
        p99_vs_resume: round3(time.p99_ms / position.p99_ms),
        ...(byTimeOpen.length > 0 ? { from_time_open_channel: summary(byTimeOpen) } : {}),
        raw_consumer: summary(raw),
        p99_vs_raw: round3(time.p99_ms / summary(raw).p99_ms),
      };
      progress(`${t} time to first event: ${JSON.stringify(first[t])}`);
    }

    await client.close();
    await disk.edge.shutdown();
    await grpc.shutdown();
    await unified.app.close();
    latest.stop();
    tail.stop();
    return {
      benchmark: 'replay',
      events: state.messages,
      rounds: ROUNDS,
      seed: SEED,
      throughput,
      time_to_first_event: first,
      goal: 'replay at max ≥ 0.9× the same transport’s catch-up; time to first event p99 ≤ 50 ms',
    };
  } finally {
    await bench.cleanup();
  }
}
