// https://library.tradingtechnologies.com/user-setup/sgx-overview.html (SGX Titan market data is Genium INET ITCH)
/**
 * SGX: no public JSON exists; this accepts the ITCH-style JSON of VENUES.md §5.1 — `msg_type`
 * `trade` (`match_id`, `aggressor_side` B/S, `price`, `quantity` in contracts, `timestamp_ns`) and
 * `book` (`bids`/`asks` as `[price, quantity]`, a snapshot). Order messages change one order (rejected).
 */
import type { Side } from '../../../contracts/events.ts';
import { book, trade, tupleLevels } from '../canonical.ts';
import { NormalizeError } from '../errors.ts';
import { fieldError, isObject, nsToMs, positive, symbolOf, textId } from '../fields.ts';
import type { Mapper } from '../mapper.ts';

/** ITCH order-level messages: changes to one order, not a book snapshot. */
const ORDER_MESSAGES = new Set([
  'add_order',
  'delete_order',
  'modify_order',
  'replace_order',
  'order_executed',
]);

/** `aggressor_side` is the taker's: B = buyer, S = seller. */
function aggressor(side: unknown): Side {
  if (side === 'B') return 'buy';
  if (side === 'S') return 'sell';
  throw fieldError(side, 'aggressor_side', '"B" or "S"');
}

export const sgxMapper: Mapper = {
  source: 'sgx',
  map(payload, ctx, out) {
    if (!isObject(payload)) throw fieldError(payload, 'payload', 'an object');
    const type = payload.msg_type;
    if (type === 'trade') {
      const ts = nsToMs(payload.timestamp_ns, 'timestamp_ns');
      out.push(
        trade(
          'sgx',
          symbolOf(ctx, payload.symbol, 'symbol'),
          ts,
          ts,
          aggressor(payload.aggressor_side),
          positive(payload.price, 'price'),
          positive(payload.quantity, 'quantity'),
          textId(payload.match_id, 'match_id'),
        ),
      );
    } else if (type === 'book') {
      const ts = nsToMs(payload.timestamp_ns, 'timestamp_ns');
      const symbol = symbolOf(ctx, payload.symbol, 'symbol');
      const bids = tupleLevels(payload.bids, 'bids', false);
      out.push(book('sgx', symbol, ts, ts, bids, tupleLevels(payload.asks, 'asks', false), true));
    } else if (typeof type === 'string' && ORDER_MESSAGES.has(type)) {
      throw new NormalizeError(
        'book_delta',
        `sgx: ${type} changes one order, not price-level sizes; send a "book" snapshot`,
      );
    } else if (type === undefined) {
      throw new NormalizeError('missing_field', 'sgx: msg_type is missing ("trade" or "book")', 'msg_type');
    } else {
      throw new NormalizeError(
        'unsupported_payload',
        `sgx: msg_type ${String(JSON.stringify(type)).slice(0, 40)} is not supported`,
      );
    }
  },
};
