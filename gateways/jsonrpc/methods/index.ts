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
  const value = paramsObject(method.params, call.params);
  const parsed = method.params.schema.safeParse(value);
  if (!parsed.success) throw invalidInput(parsed.error, value);
  return method.run(parsed.data as never, ctx);
}
