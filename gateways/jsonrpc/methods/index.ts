/**
 * The method table of the JSON-RPC edge: one entry per method of `contracts/jsonrpc.ts`, each with
 * its params contract. `runCall` parses the params (an array in the spec's order, or an object)
 * and runs the method; an unknown method is -32601 (any `eth_*` but the four served included),
 * params that do not fit are -32602.
 */
import { ApiError } from '../../../contracts/errors.ts';
import {
  JSONRPC_METHODS,
  type JsonRpcMethod,
  type MethodParams,
  type ParamsOf,
  paramsObject,
} from '../../../contracts/jsonrpc.ts';
import type { JsonRpcCall } from '../../core/jsonrpc-envelope.ts';
import { LruCache } from '../../core/lru-cache.ts';
import { invalidInput } from '../../core/validate.ts';
import type { CallContext, EdgeDeps, Json } from '../context.ts';
import { barMethods } from './bars.ts';
import { ethMethods } from './eth.ts';
import { filterMethods } from './filters.ts';
import { marketMethods } from './market.ts';
import { tradeMethods } from './trades.ts';

type Run = (params: never, ctx: CallContext) => Json | Promise<Json>;
export type MethodTable = ReadonlyMap<string, { params: MethodParams; run: Run }>;

export function createMethods(deps: EdgeDeps): MethodTable {
  const impl: { [M in JsonRpcMethod]: (params: ParamsOf<M>, ctx: CallContext) => Json | Promise<Json> } = {
    ...ethMethods(deps),
    ...marketMethods(deps),
    ...tradeMethods(deps),
    ...barMethods(deps),
    ...filterMethods(deps),
  };
  return new Map(
    (Object.keys(JSONRPC_METHODS) as JsonRpcMethod[]).map((name) => [
      name,
      { params: JSONRPC_METHODS[name], run: impl[name] as Run },
    ]),
  );
}

/** Runs one call: its result as JSON text, or an ApiError thrown (synchronously or not). */
export function runCall(methods: MethodTable, call: JsonRpcCall, ctx: CallContext): Json | Promise<Json> {
  const method = methods.get(call.method);
  if (!method) {
    const hint = call.method.startsWith('eth_') ? ' (eth_blockNumber and eth_chainId are served)' : '';
    throw new ApiError('method_not_found', `method not found: ${call.method}${hint}`, {
      method: call.method,
    });
  }
  const key = paramsKey(call.params);
  let kept = accepted.get(method.params);
  let params = key === null ? undefined : kept?.get(key);
  if (params === undefined) {
    const value = paramsObject(method.params, call.params);
    const parsed = method.params.schema.safeParse(value);
    if (!parsed.success) throw invalidInput(parsed.error, value);
    params = parsed.data;
    if (key !== null && flat(params)) {
      if (!kept) {
        kept = new LruCache(1_024, 3_600_000);
        accepted.set(method.params, kept);
      }
      kept.set(key, Object.freeze(params));
    }
  }
  return method.run(params as never, ctx);
}

/**
 * Params that passed their contract, by contract (1,024 each) and the params as sent: a batch asks
 * the same few (`md_midPrice` of a coin) again and again, and validating each costs more than its
 * answer. Only flat arrays of short scalars whose parsed form is flat too are kept (no object
 * inside that a method could change; frozen anyway); anything else is validated every time.
 */
const accepted = new WeakMap<MethodParams, LruCache<string, unknown>>();
const MAX_KEY_CHARS = 160;

const flat = (o: unknown): boolean =>
  typeof o === 'object' && o !== null && Object.values(o).every((v) => v === null || typeof v !== 'object');

function paramsKey(params: unknown): string | null {
  if (!Array.isArray(params) || params.length > 4) return null;
  // The commonest, one string (a coin), is its own key: every other key is empty (no params) or
  // starts with the separator, which a kept string never holds.
  const only = params.length === 1 ? params[0] : undefined;
  if (typeof only === 'string' && only !== '')
    return only.length <= MAX_KEY_CHARS && !only.includes('\u0000') ? only : null;
  let key = '';
  for (const v of params) {
    const t = typeof v;
    if (v !== null && t !== 'string' && t !== 'number' && t !== 'boolean') return null;
    // The separator never occurs inside a part, so two different params never share a key.
    if (t === 'string' && (v as string).includes('\u0000')) return null;
    key += `\u0000${t === 'string' ? 's' : 'v'}${String(v)}`;
  }
  return key.length > MAX_KEY_CHARS ? null : key;
}
