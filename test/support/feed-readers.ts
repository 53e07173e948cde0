/**
 * One reader per transport over the real clients, each resolving once its feed is positioned
 * (attached live, or resuming after `after`), collecting the trades it receives as FeedItems:
 * SSE (fetch), gRPC StreamEvents and the bidirectional Stream (grpc-js), disk-sync (ws, json or
 * msgpack), JSON-RPC polling filters (fetch; `poll` asks for changes). Used by the tenant-isolation
 * and chain-scope tests (tenant-isolation.ts).
 */
import type { ClientDuplexStream, ClientReadableStream } from '@grpc/grpc-js';
import type { Encoding } from '../../contracts/disksync.ts';
import { connectSync, type SyncClient } from './disksync.ts';
import { eventually } from './eventually.ts';
import { keyMetadata, type PriceClient } from './grpc.ts';
import { call } from './jsonrpc.ts';
import { openSse } from './sse.ts';
import type { FeedItem, Reader } from './tenant-isolation.ts';

/** What a subscription names (no list: everything the key may read). */
export type Wanted = { coins?: string[]; sources?: string[] };

/** The unified stream (or the dashboard proxy) at `url` with `headers` as credentials. */
export async function sseReader(
  url: string,
  headers: Record<string, string>,
  after: number | null,
  wanted: Wanted = {},
): Promise<Reader> {
  const got: FeedItem[] = [];
  const q = new URLSearchParams();
  if (wanted.coins) q.set('coin', wanted.coins.join(','));
  if (wanted.sources) q.set('source', wanted.sources.join(','));
  const stream = await openSse(
    `${url}/api/v1/unified/stream${q.size ? `?${q}` : ''}`,
    (m) => {
      if (m.event === 'message') got.push(JSON.parse(m.data));
    },
    { ...headers, ...(after === null ? {} : { 'last-event-id': String(after) }) },
  );
  if (stream.status !== 200) throw new Error(`unified stream: HTTP ${stream.status}`);
  return { got, close: () => stream.abort() };
}

/** The trades of gRPC FeedMessages (batches unpacked). */
function itemsOf(m: Record<string, unknown>): FeedItem[] {
  if (m.batch) return (m.batch as { messages: Record<string, unknown>[] }).messages.flatMap(itemsOf);
  const t = m.trade as FeedItem | undefined;
  return t ? [{ seq: Number(t.seq), source: t.source, symbol: t.symbol, trade_id: t.trade_id }] : [];
}

type GrpcCall = ClientReadableStream<unknown> | ClientDuplexStream<unknown, unknown>;

/** A reader over a call's messages, open once its headers have come (the feed is positioned then). */
async function grpcReader(call: GrpcCall): Promise<Reader & { call: GrpcCall }> {
  const got: FeedItem[] = [];
  call.on('data', (m: Record<string, unknown>) => got.push(...itemsOf(m)));
  call.on('error', () => {});
  await new Promise((r) => call.once('metadata', r));
  return { got, call, close: () => call.cancel() };
}

const subscription = (wanted: Wanted, after: number | null) => ({
  ...wanted,
  ...(after === null ? {} : { after_seq: after }),
});

export const streamEventsReader = (
  client: PriceClient,
  key: string,
  after: number | null,
  wanted: Wanted = {},
): Promise<Reader> => grpcReader(client.StreamEvents(subscription(wanted, after), keyMetadata(key)));

/** The bidirectional Stream, opened with `wanted` (batched messages). */
export function bidiReader(
  client: PriceClient,
  key: string,
  after: number | null,
  wanted: Wanted = {},
): Promise<Reader> {
  const call = client.Stream(keyMetadata(key)) as ClientDuplexStream<unknown, unknown>;
  call.write({ open: { ...subscription(wanted, after), batch: true } });
  return grpcReader(call);
}

/**
 * The bidirectional Stream opened on `first`, then `subscribe` to `then`: the new feed is opened
 * from the stream's position (the open's `after_seq`), through the same core. Ready once a pong
 * that follows the subscribe has come (changes are applied in order).
 */
export async function bidiSubscribedReader(
  client: PriceClient,
  key: string,
  after: number | null,
  first: Wanted,
  then: Wanted,
): Promise<Reader> {
  const call = client.Stream(keyMetadata(key)) as ClientDuplexStream<unknown, unknown>;
  const pongs: string[] = [];
  call.on('data', (m: Record<string, unknown>) => {
    const id = (m.pong as { id?: string } | undefined)?.id;
    if (id) pongs.push(id);
  });
  call.write({ open: subscription(first, after) });
  const reader = await grpcReader(call);
  call.write({ subscribe: then });
  call.write({ ping: { id: 'subscribed' } });
  await eventually(() => pongs.includes('subscribed'), 10_000, 'the subscribe applied');
  return reader;
}

/** One disk-sync connection of `key` with one subscription (`clients` keeps it for the afterAll). */
export async function disksyncReader(
  url: string,
  key: string,
  after: number | null,
  encoding: Encoding,
  clients: SyncClient[],
  wanted: Wanted = {},
): Promise<Reader> {
  const c = connectSync(url, { key });
  clients.push(c);
  c.send({
    op: 'subscribe',
    id: 'feed',
    ...wanted,
    encoding,
    ...(after === null ? {} : { from_seq: after }),
  });
  // A live-only subscription is attached at `caught_up`; a resumed one is positioned at `subscribed`.
  if (after === null) await c.control('caught_up');
  else await c.control('subscribed');
  return { got: c.events as unknown as FeedItem[], close: () => c.close() };
}

/** A JSON-RPC call's result; an error fails with it. */
export async function rpcResult(url: string, key: string, method: string, params: unknown): Promise<unknown> {
  const answer = await call(url, method, params, { 'x-api-key': key });
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** A JSON-RPC polling filter (`md_newFilter` with `last_event_id` = `after`); `poll` asks for changes. */
export async function filterReader(
  url: string,
  key: string,
  after: number | null,
  wanted: Wanted = {},
): Promise<Reader> {
  const spec = { ...wanted, ...(after === null ? {} : { last_event_id: after }) };
  const id = await rpcResult(url, key, 'md_newFilter', [spec]);
  const got: FeedItem[] = [];
  return {
    got,
    async poll() {
      got.push(...((await rpcResult(url, key, 'md_getFilterChanges', [id])) as FeedItem[]));
    },
    async close() {
      await rpcResult(url, key, 'md_uninstallFilter', [id]);
    },
  };
}
