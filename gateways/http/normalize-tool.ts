/**
 * `normalize_events` and `POST /mcp/normalize`: source-native payloads → canonical events, then
 * optionally published to `MD` (message ids from the content, so a repeated request publishes
 * nothing twice) and/or cached. When no element is usable: 422 with every rejection, and nothing
 * is published or cached.
 */

import { contentHash } from '../../contracts/caches.ts';
import { ApiError } from '../../contracts/errors.ts';
import { NORMALIZE_EVENTS } from '../../contracts/mcp-data-tools.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { CacheStore } from '../../producers/caches/cache-store.ts';
import { isNormalizeError, NORMALIZER_VERSION, normalizeBatch } from '../../producers/normalizer/index.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { defineTool, type ToolDefinition } from './mcp/tool-registry.ts';

export type NormalizeToolDeps = { nats: Nats; caches: CacheStore; log: Logger };

export function normalizeTool(deps: NormalizeToolDeps): ToolDefinition {
  return defineTool({
    spec: NORMALIZE_EVENTS,
    legacy: { method: 'POST', url: '/mcp/normalize', access: 'mcp' },
    run: async (body) => {
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
      if (body.enable_cache) {
        const symbol = body.symbol ?? events[0]?.symbol ?? 'unknown';
        const rawJsonBytes = Buffer.byteLength(JSON.stringify(body.events.map((e) => e.payload)));
        const manifest = await deps.caches.store({
          source: body.source,
          symbol,
          events,
          rawJsonBytes,
          normalizerVersion: NORMALIZER_VERSION,
        });
        out.cache_key = manifest.cache_key;
      }
      if (body.stream) {
        const id = contentHash(events).slice('sha256:'.length, 'sha256:'.length + 24);
        const at = nowUs();
        out.published = await publishEvents(
          deps.nats.js,
          events.map((event, i) => ({ event, id: `norm.${id}.${i}`, ingestUs: at })),
          deps.log,
        );
      }
      return out;
    },
  });
}
