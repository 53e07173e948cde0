/**
 * What one client of the feed transports (unified SSE, JSON-RPC, gRPC, disk-sync) can make the
 * edge hold or ask of JetStream per request, stream or connection, whatever its tier (issue 27).
 * Pure numbers; docs/limits.md lists them with where each is enforced.
 */

/** Coins one subscription may name (SSE `coin`, a JSON-RPC filter, a gRPC Subscription, a disk-sync subscribe); beyond it invalid_params. */
export const MAX_COINS_PER_SUBSCRIPTION = 100;
/** Coins all the calls of one JSON-RPC request may name together; the calls past it are -32602. */
export const MAX_COINS_PER_JSONRPC_REQUEST = 500;
/**
 * JetStream API requests that resolving the coins of one subscription may cost: the viewer's own
 * coins are read with one `STREAM.INFO` (one page of up to 100,000 subjects), and only when some
 * coin is not the platform's. A JSON-RPC request reads them at most once for all its calls.
 */
export const OWN_COIN_LOOKUPS_PER_SUBSCRIPTION = 1;

/** Events one JSON-RPC request (all the calls of a batch together) may answer. */
export const MAX_JSONRPC_ANSWER_EVENTS = 20_000;
/** Bytes of events one JSON-RPC request may answer (8 MiB). */
export const MAX_JSONRPC_ANSWER_BYTES = 8 * 1024 * 1024;
/** Calls of one JSON-RPC batch run at once; the others wait their turn. */
export const JSONRPC_BATCH_CONCURRENCY = 8;
/** KV slots of a key an `md_newFilter` reads at once while it looks for a free one. */
export const FILTER_SLOT_READ_CHUNK = 16;

/** HTTP/2 streams (gRPC calls) one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
export const GRPC_MAX_CONCURRENT_STREAMS = 100;
/** `grpc.health.v1.Health/Watch` calls open at once on one edge (they need no key); beyond it RESOURCE_EXHAUSTED. */
export const GRPC_HEALTH_MAX_WATCHES = 1_000;
/** Control messages (subscribe, unsubscribe, ping) of one bidirectional `Stream` waiting to be applied; beyond it RESOURCE_EXHAUSTED. */
export const GRPC_STREAM_MAX_PENDING = 32;

/** Client messages a disk-sync connection may send before its admission completes; beyond it close 4029. */
export const DISKSYNC_EARLY_MAX_MESSAGES = 16;
/** Bytes of those early messages (1 MiB); beyond it close 4029. */
export const DISKSYNC_EARLY_MAX_BYTES = 1024 * 1024;
