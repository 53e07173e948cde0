/**
 * A real JSON-RPC edge in this process on a free port: its own live tail, latest-state view and
 * filter store, behind the open guard (default), the service's guard, or a real API-key guard on a
 * frozen clock (`clock`: no refill, so a Basic key has exactly its burst of 25 tokens). Plus a
 * `call` helper that posts a body and returns status, headers and the parsed answer.
 */
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { createApiKeyGuard } from '../../gateways/core/api-key-guard.ts';
import { type Guard, openGuard } from '../../gateways/core/guard.ts';
import { KeyStore } from '../../gateways/core/key-store.ts';
import { LatestState } from '../../gateways/core/latest-state.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { createRateLimiter } from '../../gateways/core/rate-limit/rate-limiter.ts';
import { buildJsonRpcApp, type JsonRpcApp } from '../../gateways/jsonrpc/app.ts';
import { FilterStore } from '../../gateways/jsonrpc/filter-store.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { createSecrets } from '../../platform/secrets.ts';

export type TestJsonRpc = {
  url: string;
  rpc: JsonRpcApp;
  tail: LiveTail;
  latest: LatestState;
  /** The real guard's key store, when there is one. */
  keys: KeyStore | null;
  close(): Promise<void>;
};

export type TestJsonRpcOptions = {
  /** `open` (default), `keys` (the service's guard), or a guard of the test's own. */
  guard?: 'open' | 'keys' | Guard;
  region?: 'us' | 'jp';
  /** With `guard: 'keys'`: the rate limiter's clock (frozen: no refill). */
  clock?: () => number;
};

export async function startTestJsonRpc(
  nats: Nats,
  config: Config,
  opts: TestJsonRpcOptions = {},
): Promise<TestJsonRpc> {
  const log = createLogger(config.LOG_LEVEL, 'jsonrpc');
  let guard: Guard = typeof opts.guard === 'object' ? opts.guard : openGuard;
  let keys: KeyStore | null = null;
  let stopGuard = async () => {};
  if (opts.guard === 'keys' && opts.clock) {
    keys = await KeyStore.start(
      nats,
      createSecrets(config.API_KEY_SECRET, config.API_KEY_SECRET_VERSION),
      log,
    );
    const limiter = await createRateLimiter(nats, { now: opts.clock });
    guard = createApiKeyGuard({ keys, limiter });
    const store = keys;
    stopGuard = async () => {
      await store.stop();
      await limiter.close();
    };
  } else if (opts.guard === 'keys') {
    const edge = await startEdgeGuard(nats, config, log);
    guard = edge.guard;
    keys = edge.keys;
    stopGuard = () => edge.part.stop();
  }
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const latest = await LatestState.start(nats, tail, log);
  const filters = await FilterStore.open(nats, config.JSONRPC_FILTER_TTL_S * 1_000);
  const rpc = buildJsonRpcApp({
    config,
    nats,
    tail,
    latest,
    filters,
    guard,
    log,
    region: opts.region ?? 'us',
  });
  const url = await rpc.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    rpc,
    tail,
    latest,
    keys,
    async close() {
      await rpc.shutdown();
      latest.stop();
      tail.stop();
      await stopGuard();
    },
  };
}

export type RpcError = { code: number; message: string; data: Record<string, unknown> };
export type RpcAnswer = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: RpcError };

/** A call object (`id` defaults to 1). */
export const rpc = (method: string, params?: unknown, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});

/** POSTs `body` (JSON-encoded unless already a string) to the edge. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** One call's answer (HTTP 200 expected). */
export async function call(
  url: string,
  method: string,
  params?: unknown,
  headers: Record<string, string> = {},
): Promise<RpcAnswer> {
  const res = await post(url, rpc(method, params), headers);
  if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${res.text}`);
  return res.json as RpcAnswer;
}
