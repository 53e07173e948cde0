/**
 * Worker process of the connector benchmark: the venue replay server (test/support/venue-replay.ts)
 * in a process of its own, so that building and sending frames costs the measured process nothing.
 * `start {venue, frames}` → `{wsUrl, restUrl}`; one connection replays every frame, then goes quiet.
 */
import {
  type SnapshotServer,
  startSnapshotServer,
  startVenueReplay,
  type VenueReplay,
} from '../../test/support/venue-replay.ts';
import { binanceFrames, hyperliquidFrames } from './connector-frames.ts';
import { serveWorker } from './ipc.ts';

let replay: VenueReplay | undefined;
let snapshots: SnapshotServer | undefined;

async function stop(): Promise<void> {
  await replay?.close();
  await snapshots?.close();
  replay = undefined;
  snapshots = undefined;
}

serveWorker(
  {
    async start(args: { venue: 'binance' | 'hyperliquid'; frames: number; offset: number }) {
      await stop();
      const v =
        args.venue === 'binance'
          ? binanceFrames(args.frames, args.offset)
          : hyperliquidFrames(args.frames, args.offset);
      snapshots = await startSnapshotServer(v.snapshots ?? {});
      const served = snapshots;
      replay = await startVenueReplay({
        sessions: [[...v.acks, ...v.frames]],
        subscriptions: v.subscriptions,
        waits: {
          async snapshot() {
            while (served.served('BTCUSDT') === 0) await new Promise((r) => setTimeout(r, 1));
          },
        },
      });
      return { wsUrl: replay.url, restUrl: snapshots.url };
    },
    stop,
  },
  stop,
);
