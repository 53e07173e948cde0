/**
 * `contracts/proto/price.proto` loaded once per process: the package definition (for reflection),
 * the PriceService definition the server registers, and the protobuf encoders of the streamed
 * messages. Streaming responses are encoded by the edge itself (once per event per process, see
 * framer.ts), so the served definition writes their bytes as they are.
 */
import { fileURLToPath } from 'node:url';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { protoPath as HEALTH_PROTO_PATH } from 'grpc-health-check';

export const PROTO_PATH = fileURLToPath(new URL('../../contracts/proto/price.proto', import.meta.url));

/** How every process reads the proto: snake_case fields, int64 as numbers, oneofs named. */
export const LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, oneofs: true } as const;

export const SERVICE_NAME = 'price.PriceService';

export const packageDefinition: PackageDefinition = loadSync(PROTO_PATH, LOADER_OPTIONS);

/** What reflection describes: price.PriceService and grpc.health.v1.Health. */
export const reflectedDefinition: PackageDefinition = loadSync(
  [PROTO_PATH, HEALTH_PROTO_PATH],
  LOADER_OPTIONS,
);

type AnyMethod = MethodDefinition<unknown, unknown>;
const priceService = packageDefinition[SERVICE_NAME] as unknown as Record<string, AnyMethod>;

const serializerOf = (method: string) => (priceService[method] as AnyMethod).responseSerialize;

/** Protobuf bytes of a `FeedMessage` (an object with one of its `kind` fields). */
export const encodeFeedMessage = serializerOf('StreamEvents') as (m: Record<string, unknown>) => Buffer;
/** Protobuf bytes of a `MidPriceResponse`. */
export const encodeMid = serializerOf('GetMidPrice') as (m: Record<string, unknown>) => Buffer;

const asIs = (b: Buffer): Buffer => b;

/** The service as served: server-streaming and bidirectional methods write pre-encoded bytes. */
export const servedDefinition: ServiceDefinition = Object.fromEntries(
  Object.entries(priceService).map(([name, m]) => [
    name,
    m.responseStream ? { ...m, responseSerialize: asIs } : m,
  ]),
) as ServiceDefinition;
