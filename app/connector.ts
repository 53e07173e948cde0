/**
 * `producer connector --venue binance|hyperliquid --symbols A,B`: one live exchange connector
 * (producers/connectors/) publishing the venue's trades and books to `MD`.
 */
import { SymbolName } from '../contracts/events.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { CONNECTOR_VENUES, type ConnectorVenue, startConnector } from '../producers/connectors/connector.ts';

export type ConnectorArgs = { venue: ConnectorVenue; symbols: string[] };

/** `--venue` and `--symbols` checked; throws a message naming the bad flag. */
export function parseConnectorArgs(venue: string | undefined, symbols: string | undefined): ConnectorArgs {
  if (!CONNECTOR_VENUES.includes(venue as ConnectorVenue))
    throw new Error(`--venue must be one of ${CONNECTOR_VENUES.join(', ')}`);
  const list = (symbols ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0 || list.some((s) => !SymbolName.safeParse(s).success))
    throw new Error('--symbols must be a comma list of venue symbols (Binance BTCUSDT, Hyperliquid BTC)');
  return { venue: venue as ConnectorVenue, symbols: list };
}

export function startConnectorProducer(
  nats: Nats,
  config: Config,
  log: Logger,
  args: ConnectorArgs,
): Stoppable {
  const connector = startConnector(nats, args.venue, args.symbols, config, log);
  return { name: `producer-connector-${args.venue}`, stop: () => connector.stop() };
}
