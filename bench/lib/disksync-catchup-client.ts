/**
 * The catch-up client of `npm run bench -- disksync`: one connection subscribing from `from_seq` 0
 * until the frame holding the stream's last event, counting data-frame bytes without decoding the
 * frames (each frame's last `seq` is found by bytes; the first frame is decoded and checked). Runs
 * in the bench process or, as a worker process (`DISKSYNC_BENCH_CLIENT=1`, bench/lib/ipc.ts), in
 * one of its own. Also the rate measure both sides of the bench report.
 */
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import type { Encoding } from '../../contracts/disksync.ts';
import { serveWorker } from './ipc.ts';

const round = (x: number) => Math.round(x * 1_000) / 1_000;
const MB = 1_000_000;

/** `cpu_us_per_event`: this process's CPU (all threads) per event, steadier than events/s under load. */
export type Rate = {
  events: number;
  seconds: number;
  events_per_s: number;
  mb_per_s: number;
  cpu_us_per_event: number;
};
export const start = () => ({ t0: performance.now(), cpu: process.cpuUsage() });
export const rate = (events: number, bytes: number, from: ReturnType<typeof start>): Rate => {
  const seconds = (performance.now() - from.t0) / 1_000;
  const cpu = process.cpuUsage(from.cpu);
  return {
    events,
    seconds: round(seconds),
    events_per_s: Math.round(events / seconds),
    mb_per_s: round(bytes / MB / seconds),
    cpu_us_per_event: round((cpu.user + cpu.system) / events),
  };
};

export function connect(url: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url}/`, { maxPayload: 64 * 1024 * 1024, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const JSON_SEQ = Buffer.from('"seq":');
const MSGPACK_SEQ = Buffer.from([0xa3, 0x73, 0x65, 0x71]); // fixstr "seq"

/** The `seq` of a data frame's last event, found without decoding the frame. */
function lastSeq(data: Buffer, binary: boolean): number {
  if (!binary) {
    const i = data.lastIndexOf(JSON_SEQ);
    return i < 0
      ? -1
      : Number.parseInt(data.toString('latin1', i + JSON_SEQ.length, i + JSON_SEQ.length + 20), 10);
  }
  const i = data.lastIndexOf(MSGPACK_SEQ);
  if (i < 0) return -1;
  const at = i + MSGPACK_SEQ.length;
  const tag = data[at] as number;
  if (tag < 0x80) return tag;
  if (tag === 0xcc) return data.readUInt8(at + 1);
  if (tag === 0xcd) return data.readUInt16BE(at + 1);
  if (tag === 0xce) return data.readUInt32BE(at + 1);
  if (tag === 0xcb) return data.readDoubleBE(at + 1);
  return -1;
}

/**
 * One connection subscribing from `from_seq` 0 until the frame holding the stream's last event
 * (history from the log, then the tail's ring); data-frame bytes counted, no frame decoded but
 * the first and the last (which are checked: the replay starts at 1 and ends at `last`).
 */
export async function edgeCatchUp(url: string, encoding: Encoding, last: number): Promise<Rate> {
  const ws = await connect(url);
  let bytes = 0;
  let first: { data: Buffer; binary: boolean } | null = null;
  const t0 = start();
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary || data[0] === 0x5b /* [ */) {
        bytes += data.length;
        first ??= { data, binary };
        if (lastSeq(data, binary) >= last) resolve();
        return;
      }
      const c = JSON.parse(data.toString()) as { type: string };
      if (c.type === 'error') reject(new Error(data.toString()));
    });
    ws.send(JSON.stringify({ op: 'subscribe', id: 'c', from_seq: 0, encoding }));
  });
  const result = rate(last, bytes, t0);
  ws.close();
  const f = first as { data: Buffer; binary: boolean } | null;
  const events = f ? ((f.binary ? unpack(f.data) : JSON.parse(f.data.toString())) as { seq: number }[]) : [];
  if (events[0]?.seq !== 1) throw new Error(`catch-up started at ${events[0]?.seq}, not 1`);
  return result;
}

// Started by bench/disksync.ts as a worker process.
if (process.env.DISKSYNC_BENCH_CLIENT === '1')
  serveWorker({
    catchUp: (m: { url: string; encoding: Encoding; last: number }) => edgeCatchUp(m.url, m.encoding, m.last),
  });
