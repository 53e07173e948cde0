/**
 * The EVM-style methods, answered as viem and ethers expect: hex quantities without leading zeros.
 * `eth_blockNumber` is the newest sequence of the `MD` stream this process has received (the
 * number space of SSE event ids and `seq` fields); the chain id comes from the configuration.
 */
import { JSONRPC_CLIENT_VERSION } from '../../../contracts/jsonrpc.ts';
import { type EdgeDeps, type Json, toJson } from '../context.ts';

export const hexQuantity = (n: number): string => `0x${n.toString(16)}`;

export function ethMethods(deps: EdgeDeps) {
  const chainId = toJson(hexQuantity(deps.settings.chainId));
  const netVersion = toJson(String(deps.settings.chainId));
  const clientVersion = toJson(JSONRPC_CLIENT_VERSION);
  return {
    eth_blockNumber: (): Json => toJson(hexQuantity(deps.tail.lastSeq)),
    eth_chainId: (): Json => chainId,
    net_version: (): Json => netVersion,
    web3_clientVersion: (): Json => clientVersion,
  };
}
