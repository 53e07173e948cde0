/**
 * The JSON-RPC feed edge (`POST /`, `x-api-key`): typed calls, automatic batching (calls made in
 * the same turn of the event loop go out as one batch of at most 100), and typed errors whose
 * `rpcCode` is the catalogue's JSON-RPC code (`JsonRpcErrorCode`, built from contracts/errors.ts)
 * and whose `code` / `requestId` come from the error's `data`. fetch only: browsers use it too.
 */

import { JSON_RPC_CODES } from '@mdp/contracts/errors';
import type { Source } from '@mdp/contracts/events';
import type { JSONRPC_METHODS, JsonRpcMethod, OHLCV_INTERVALS } from '@mdp/contracts/jsonrpc';
import { MAX_JSONRPC_BATCH } from '@mdp/contracts/limits';
import type { z } from 'zod';
import { MdpError, type MdpErrorCode, networkError } from './errors.ts';
import type { BarStreamEvent, Position } from './stream-types.ts';

type NoSpaces<S extends string> = S extends `${infer A} ${infer B}` ? `${A}${NoSpaces<B>}` : S;
type CodeTable = { readonly [R in (typeof JSON_RPC_CODES)[number] as NoSpaces<R['name']>]: R['code'] };

/** The spec's JSON-RPC codes by name (`JsonRpcErrorCode.CoinNotFound` = -32003), from the catalogue. */
export const JsonRpcErrorCode: CodeTable = Object.freeze(
  Object.fromEntries(JSON_RPC_CODES.map((r) => [r.name.replaceAll(' ', ''), r.code])),
) as CodeTable;
export type JsonRpcErrorCode = CodeTable[keyof CodeTable];

type ErrorObject = { code: number; message: string; data?: Record<string, unknown> };

export class JsonRpcError extends MdpError {
  /** The JSON-RPC error code. */
  readonly rpcCode: JsonRpcErrorCode;
  readonly data: Record<string, unknown>;

  constructor(error: ErrorObject, status: number | null) {
    const data = error.data ?? {};
    const retry = typeof data.retry_after === 'number' ? data.retry_after : null;
    super((typeof data.error === 'string' ? data.error : 'invalid_response') as MdpErrorCode, error.message, {
      status,
      requestId: typeof data.request_id === 'string' ? data.request_id : null,
      retryAfterSeconds: retry,
    });
    this.rpcCode = error.code as JsonRpcErrorCode;
    this.data = data;
  }
}

/** A method's params as an object (the edge also takes them positionally). */
export type ParamsInput<M extends JsonRpcMethod> = z.input<(typeof JSONRPC_METHODS)[M]['schema']>;

/** An `md_ohlcv` interval: `1s`, `1m`, `1h` (the bar kinds `bar_1s`, `bar_1m`, `bar_1h`). */
export type OhlcvInterval = (typeof OHLCV_INTERVALS)[number];

/** `md_ohlcv`'s params, in the API's own names (times: Unix ms). */
export type OhlcvParams = ParamsInput<'md_ohlcv'>;

/**
 * `md_ohlcv`'s answer: the bars whose `start_ms` lies in [start_ms, end_ms), oldest first, each
 * with its `DERIVED` `seq` (resume a derived stream after the last one to go on live). `truncated`:
 * more bars lay in the range than one answer holds (at most 5,000): narrow the range.
 */
export type OhlcvResult = {
  coin: string;
  interval: OhlcvInterval;
  /** Present when the call named one source. */
  source?: Source;
  start_ms: number;
  end_ms: number;
  truncated: boolean;
  bars: BarStreamEvent[];
};

export type JsonRpcClientOptions = {
  /** The edge, e.g. `http://127.0.0.1:8545`. */
  url: string;
  key: string;
  fetch?: typeof fetch;
  /** Calls per HTTP request at most (default and maximum 100). */
  maxBatch?: number;
};

type Pending = { method: string; params: unknown; resolve(v: unknown): void; reject(e: unknown): void };
type Answer = { id: number; result?: unknown; error?: ErrorObject };

export class JsonRpcClient {
  /** HTTP requests sent so far. */
  requests = 0;
  private queue: Pending[] = [];
  private scheduled = false;
  private nextId = 1;
  private readonly doFetch: typeof fetch;
  private readonly url: string;

  constructor(private readonly opts: JsonRpcClientOptions) {
    this.doFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.url = `${opts.url.replace(/\/+$/, '')}/`;
  }

  /** One call; batched with every other call made in the same turn. Rejects with JsonRpcError. */
  call<T = unknown, M extends JsonRpcMethod = JsonRpcMethod>(method: M, params?: ParamsInput<M>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ method, params, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  /** `eth_blockNumber`: the `MD` stream's last sequence, the position every transport resumes from. */
  async blockNumber(): Promise<Position> {
    return Number.parseInt(await this.call<string>('eth_blockNumber'), 16);
  }

  /**
   * `md_ohlcv`: the coin's trade bars of `interval` starting in [start_ms, end_ms), from the
   * `DERIVED` stream. A range ending before it starts, or of more than 5,000 bars, is a JsonRpcError
   * with `rpcCode` -32008 (`invalid_time_range`).
   */
  ohlcv(params: OhlcvParams): Promise<OhlcvResult> {
    return this.call<OhlcvResult, 'md_ohlcv'>('md_ohlcv', params);
  }

  private flush(): void {
    this.scheduled = false;
    const max = Math.min(this.opts.maxBatch ?? MAX_JSONRPC_BATCH, MAX_JSONRPC_BATCH);
    while (this.queue.length) void this.send(this.queue.splice(0, max));
  }

  private async send(calls: Pending[]): Promise<void> {
    const byId = new Map<number, Pending>();
    const body = calls.map((c) => {
      const id = this.nextId++;
      byId.set(id, c);
      return {
        jsonrpc: '2.0',
        id,
        method: c.method,
        ...(c.params === undefined ? {} : { params: c.params }),
      };
    });
    const failAll = (e: unknown) => {
      for (const c of calls) c.reject(e);
    };
    this.requests++;
    let res: Response;
    try {
      res = await this.doFetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': this.opts.key },
        body: JSON.stringify(body),
      });
    } catch (err) {
      return failAll(networkError(err));
    }
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch (err) {
      return failAll(
        new MdpError('invalid_response', `HTTP ${res.status}: not JSON`, { status: res.status, cause: err }),
      );
    }
    // A failure of the whole request (key, tier, rate limit, body): one error with id null.
    if (!Array.isArray(parsed)) {
      const one = parsed as Answer;
      return failAll(
        one?.error
          ? new JsonRpcError(one.error, res.status)
          : new MdpError('invalid_response', 'not a batch answer'),
      );
    }
    for (const a of parsed as Answer[]) {
      const c = byId.get(a.id);
      if (!c) continue;
      byId.delete(a.id);
      if (a.error) c.reject(new JsonRpcError(a.error, res.status));
      else c.resolve(a.result);
    }
    for (const c of byId.values())
      c.reject(new MdpError('invalid_response', 'the batch answer left this call out'));
  }
}
