/**
 * `normalize_events` and `POST /mcp/normalize`: source-native payloads → canonical events, then
 * optionally published and/or cached, both as the caller's account's own: `stream: true` goes to
 * the account's subject space (never the platform's shared feed; once per content, at any
 * distance in time: `AccountPublisher`), `enable_cache: true` to a cache only that account sees.
 * When no element is usable: 422 with every rejection, and nothing is published or cached.
 */

import { ApiError } from '../../contracts/errors.ts';
import { NORMALIZE_EVENTS } from '../../contracts/mcp-data-tools.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { CacheStore } from '../../producers/caches/cache-store.ts';
import { isNormalizeError, NORMALIZER_VERSION, normalizeBatch } from '../../producers/normalizer/index.ts';
import { AccountPublisher, type AccountPublisherOptions } from '../../producers/own-events-publish.ts';
import { ownerOf } from './caches/cache-tools.ts';
import { defineTool, type ToolDefinition } from './mcp/tool-registry.ts';

export type NormalizeToolDeps = {
  nats: Nats;
  caches: CacheStore;
  log: Logger;
  publish: AccountPublisherOptions;
};

export function normalizeTool(deps: NormalizeToolDeps): ToolDefinition {
  let publisher: Promise<AccountPublisher> | null = null;
  const accountPublisher = () => {
    publisher ??= AccountPublisher.open(deps.nats, deps.log, deps.publish).catch((err) => {
      publisher = null;
      throw err;
    });
    return publisher;
  };
  return defineTool({
    spec: NORMALIZE_EVENTS,
    legacy: { method: 'POST', url: '/mcp/normalize', access: 'mcp' },
    run: async (body, ctx) => {
      let result: ReturnType<typeof normalizeBatch>;
      try {
        result = normalizeBatch({ source: body.source, symbol: body.symbol, events: body.events });
      } catch (err) {
        if (isNormalizeError(err))
          throw new ApiError('unprocessable', err.message, { field: 'source', reason: err.message });
        throw err;
      }
      const { events, rejected } = result;
      if (events.length === 0) {
        const first = rejected[0];
        throw new ApiError(
          'unprocessable',
          `no usable event: ${first ? `events[${first.index}]: ${first.message}` : 'nothing produced'}`,
          {
            field: first ? `events.${first.index}.payload` : 'events',
            reason: first?.message ?? 'no events produced',
            rejected,
          },
        );
      }
      const out: Record<string, unknown> = {
        source: body.source,
        normalizer_version: NORMALIZER_VERSION,
        events,
        rejected,
      };
      const account = body.enable_cache || body.stream ? ownerOf(ctx.principal) : null;
      if (account && body.enable_cache) {
        const symbol = body.symbol ?? events[0]?.symbol ?? 'unknown';
        const rawJsonBytes = Buffer.byteLength(JSON.stringify(body.events.map((e) => e.payload)));
        const manifest = await deps.caches.store({
          accountId: account,
          source: body.source,
          symbol,
          events,
          rawJsonBytes,
          normalizerVersion: NORMALIZER_VERSION,
        });
        out.cache_key = manifest.cache_key;
      }
      if (account && body.stream) {
        out.published = (await (await accountPublisher()).publish(account, events)).published;
      }
      return out;
    },
  });
}
