/**
 * `@mdp/client`: the TypeScript client of the platform. The stream client, the service clients
 * and the error type use fetch only (Node 20+ and browsers). The same stream iterator over other
 * transports has entries of its own, so this one stays browser-safe: `@mdp/client/grpc`
 * (`streamGrpc`, Node only) and `@mdp/client/disk` (`streamDisk`, Node and browsers).
 */
export { DEFAULT_MAX_DELAY_MS, DEFAULT_RETRY_MS, reconnectDelay } from './backoff.ts';
export { ConsoleClient, type CreatedKey, type KeyView, type Session } from './console.ts';
export { barKindOf, isBar, isBookSnapshot, isDerived } from './derived-events.ts';
export { errorFromResponse, isMdpError, MdpError, type MdpErrorCode } from './errors.ts';
export type { Download } from './http.ts';
export {
  JsonRpcClient,
  type JsonRpcClientOptions,
  JsonRpcError,
  JsonRpcErrorCode,
  type OhlcvInterval,
  type OhlcvParams,
  type OhlcvResult,
  type ParamsInput,
} from './jsonrpc.ts';
export { formatPosition, isOwn, parsePosition } from './own-events.ts';
export { type ReplayWindow, replaySpeed, replayTimeMs, replayWindow } from './replay-window.ts';
export type { Endpoints } from './resuming-stream.ts';
export {
  GenerationJob,
  SimulationClient,
  type SimulationClientOptions,
  type WaitOptions,
} from './simulation.ts';
export type * from './simulation-types.ts';
export { type SseMessage, SseParser } from './sse-parser.ts';
export type { ReplayEnd } from './sse-replay.ts';
export { STREAM_PATH, stream, streamUrl, UnifiedStream } from './stream.ts';
export type * from './stream-types.ts';

export const CLIENT_VERSION = '0.4.7';
