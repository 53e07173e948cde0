/**
 * Source → mapper. Adding a venue = one file under mappers/ + one line here + fixtures
 * (and its name in contracts' SOURCES).
 */
import { SOURCES, type Source } from '../../contracts/events.ts';
import { NormalizeError } from './errors.ts';
import type { Mapper } from './mapper.ts';
import { binanceMapper } from './mappers/binance.ts';
import { cmeMapper } from './mappers/cme.ts';
import { hyperliquidMapper } from './mappers/hyperliquid.ts';
import { sgxMapper } from './mappers/sgx.ts';
import { syntheticMapper } from './mappers/synthetic.ts';

export const MAPPERS: Readonly<Record<Source, Mapper>> = {
  synthetic: syntheticMapper,
  hyperliquid: hyperliquidMapper,
  binance: binanceMapper,
  cme: cmeMapper,
  sgx: sgxMapper,
};

const isSource = (name: string): name is Source => (SOURCES as readonly string[]).includes(name);

/** The mapper of `source`; throws `NormalizeError('unknown_source')` for any other name. */
export function mapperFor(source: string): Mapper {
  if (typeof source === 'string' && isSource(source)) return MAPPERS[source];
  throw new NormalizeError(
    'unknown_source',
    `unknown source ${JSON.stringify(source)?.slice(0, 40)}; expected one of ${SOURCES.join(', ')}`,
    'source',
  );
}
