/** Funding simulation and venue details, as MCP tools and their legacy routes. */
import { ApiError } from '../../contracts/errors.ts';
import { GET_VENUE_DETAILS, SIMULATE_FUNDING_REGIME } from '../../contracts/mcp-data-tools.ts';
import { venueDetails } from '../../contracts/venues.ts';
import { simulateFunding } from '../../producers/funding/simulate.ts';
import { defineTool, type ToolDefinition } from './mcp/tool-registry.ts';

export function venueTools(): ToolDefinition[] {
  return [
    defineTool({
      spec: SIMULATE_FUNDING_REGIME,
      run: (args) => simulateFunding(args),
      legacy: { method: 'POST', url: '/mcp/simulate_funding_regime', access: 'mcp' },
    }),
    defineTool({
      spec: GET_VENUE_DETAILS,
      run: (args) => {
        const details = venueDetails(args.exchange);
        if (!details)
          throw new ApiError(
            'not_found',
            `unknown exchange ${args.exchange}: one of binance, hyperliquid, okx, bybit, cme, sgx`,
          );
        return details;
      },
      legacy: { method: 'GET', url: '/mcp/venues/:exchange', access: 'mcp' },
    }),
  ];
}
