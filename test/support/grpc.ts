/**
 * gRPC edges for tests: one in this process (startTestGrpc: the real guard, shared tail and
 * latest-state view, as `gateway grpc` runs them), and a @grpc/grpc-js client made from
 * contracts/proto/price.proto with promise helpers that keep the status, headers and trailers.
 */
import {
  type Client,
  type ClientReadableStream,
  credentials,
  loadPackageDefinition,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { startGrpcGateway } from '../../app/grpc-gateway.ts';
import { LOADER_OPTIONS, PROTO_PATH } from '../../gateways/grpc/proto.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';

export type TestGrpc = { target: string; close(): Promise<void> };

export async function startTestGrpc(
  nats: Nats,
  config: Config,
  region: 'us' | 'jp' = 'us',
): Promise<TestGrpc> {
  const log = createLogger(config.LOG_LEVEL, 'grpc');
  const edge = await startEdgeGuard(nats, config, log);
  const gw = await startGrpcGateway(nats, { ...config, GRPC_PORT_US: 0, GRPC_PORT_JP: 0 }, log, region, edge);
  return {
    target: new URL(gw.address.replace(/^grpcs?:/, 'http:')).host,
    async close() {
      await gw.stop();
      await edge.part.stop();
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: generated client
export type PriceClient = Client & Record<string, any>;

const pkg = loadPackageDefinition(loadSync(PROTO_PATH, LOADER_OPTIONS)) as unknown as {
  price: {
    PriceService: new (
      target: string,
      creds: ReturnType<typeof credentials.createInsecure>,
      options?: Record<string, unknown>,
    ) => PriceClient;
  };
};

export const priceClient = (target: string): PriceClient =>
  new pkg.price.PriceService(target, credentials.createInsecure());

/** A client on a connection of its own (grpc-js otherwise shares one connection per target). */
export const ownPriceClient = (target: string): PriceClient =>
  new pkg.price.PriceService(target, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });

export function keyMetadata(key: string | null, extra: Record<string, string> = {}): Metadata {
  const md = new Metadata();
  if (key) md.set('x-api-key', key);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return md;
}

export type UnaryResult = { value?: Record<string, unknown>; error?: ServiceError; headers: Metadata | null };

/** A unary call: its answer or its status (with trailers), and the headers it sent. */
export function unary(
  client: PriceClient,
  method: string,
  request: Record<string, unknown>,
  md: Metadata,
): Promise<UnaryResult> {
  return new Promise((resolve) => {
    let headers: Metadata | null = null;
    const call = client[method](request, md, (error: ServiceError | null, value: Record<string, unknown>) =>
      resolve(error ? { error, headers } : { value, headers }),
    );
    call.on('metadata', (m: Metadata) => {
      headers = m;
    });
  });
}

/** The trailers of a failed call as plain strings. */
export const trailers = (err: ServiceError | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(err?.metadata?.getMap() ?? {}).map(([k, v]) => [k, String(v)]));

export type Collected = {
  messages: Record<string, unknown>[];
  /** Settles with the stream's end: its status error, or null for OK. */
  ended: Promise<ServiceError | null>;
  call: ClientReadableStream<Record<string, unknown>>;
};

/** Collects the messages of a server stream until it ends. */
export function collect(call: ClientReadableStream<Record<string, unknown>>): Collected {
  const messages: Record<string, unknown>[] = [];
  call.on('data', (m: Record<string, unknown>) => messages.push(m));
  const ended = new Promise<ServiceError | null>((resolve) => {
    call.on('error', (e: ServiceError) => resolve(e));
    call.on('end', () => resolve(null));
  });
  return { messages, ended, call };
}

/** The `seq` of the trades and books among `messages`. */
export const seqsOf = (messages: Record<string, unknown>[]): number[] =>
  messages.flatMap((m) => {
    const ev = (m.trade ?? m.book) as { seq?: number } | undefined;
    return ev?.seq !== undefined ? [ev.seq] : [];
  });
