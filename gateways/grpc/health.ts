/**
 * `grpc.health.v1.Health` of the edge, overall ('') and `price.PriceService`: SERVING while NATS is
 * connected and the streams exist (the check `/healthz` makes) and no maintenance window covers
 * the edge; NOT_SERVING otherwise. Re-checked every `everyMs`, so a Watch hears a change within it.
 */
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import type { Region } from '../../contracts/status.ts';
import type { Nats } from '../../platform/nats.ts';
import { healthy } from '../core/health-route.ts';
import type { Maintenance } from '../core/maintenance.ts';
import { SERVICE_NAME } from './proto.ts';

export type EdgeHealth = { impl: HealthImplementation; stop(): void };

export function startEdgeHealth(
  nats: Nats,
  region: Region,
  maintenance: Pick<Maintenance, 'active'> | null,
  everyMs = 1_000,
): EdgeHealth {
  const impl = new HealthImplementation({ '': 'NOT_SERVING', [SERVICE_NAME]: 'NOT_SERVING' });
  let stopped = false;
  let checking = false;
  const set = (s: ServingStatus) => {
    impl.setStatus('', s);
    impl.setStatus(SERVICE_NAME, s);
  };
  const check = async () => {
    if (checking || stopped) return;
    checking = true;
    try {
      const ok = (await healthy(nats)) && !maintenance?.active(region, 'grpc');
      if (!stopped) set(ok ? 'SERVING' : 'NOT_SERVING');
    } finally {
      checking = false;
    }
  };
  void check();
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();
  return {
    impl,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
