/**
 * The process's Prometheus metrics (prom-client), conventional names and units. Module-level
 * singletons: one registry per process, however many apps it runs.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'mdp_' });

const registers = [metricsRegistry];

export const httpRequests = new Counter({
  name: 'mdp_http_requests_total',
  help: 'HTTP requests answered, by surface, route template, method and status.',
  labelNames: ['surface', 'route', 'method', 'status'] as const,
  registers,
});

export const httpDuration = new Histogram({
  name: 'mdp_http_request_duration_seconds',
  help: 'Time to answer an HTTP request (to the first byte for streams), seconds.',
  labelNames: ['surface', 'route', 'method'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
  registers,
});

export const openStreams = new Gauge({
  name: 'mdp_open_streams',
  help: 'Open streaming connections, by surface.',
  labelNames: ['surface'] as const,
  registers,
});

export const generationJobs = new Counter({
  name: 'mdp_generation_jobs_total',
  help: 'Generation jobs finished by this process, by outcome.',
  labelNames: ['status'] as const,
  registers,
});

export const generationRows = new Counter({
  name: 'mdp_generation_rows_total',
  help: 'Rows written to completed generation artifacts.',
  registers,
});

export const rateLimitRejections = new Counter({
  name: 'mdp_rate_limit_rejections_total',
  help: 'Requests refused with 429, by tier.',
  labelNames: ['tier'] as const,
  registers,
});

export const authFailures = new Counter({
  name: 'mdp_auth_failures_total',
  help: 'Requests refused by the edge guard (401/403), by error code.',
  labelNames: ['code'] as const,
  registers,
});

export const processFaults = new Counter({
  name: 'mdp_process_faults_total',
  help: 'Unhandled promise rejections and uncaught exceptions (each stops the process), by kind.',
  labelNames: ['kind'] as const,
  registers,
});

export const accountProjectionFailures = new Counter({
  name: 'mdp_account_projection_write_failures_total',
  help: 'Failed KV writes of the account projector, by kind (transient: NATS away, retried until it lands; permanent: retried, then the write is given up).',
  labelNames: ['kind'] as const,
  registers,
});

export const accountPoisonEvents = new Counter({
  name: 'mdp_account_projection_poison_events_total',
  help: 'ACCOUNTS events the projector could not apply (undecodable, or a write refused for good) and skipped, by event type.',
  labelNames: ['event_type'] as const,
  registers,
});

/** Filled at scrape time by whoever follows a stream (see `registerLagSource`). */
export const consumerLag = new Gauge({
  name: 'mdp_jetstream_consumer_lag_messages',
  help: 'Messages stored in a stream but not yet received by this process, by consumer.',
  labelNames: ['consumer'] as const,
  registers,
  async collect() {
    await Promise.all(
      [...lagSources].map(async ([name, read]) => this.set({ consumer: name }, await read().catch(() => 0))),
    );
  },
});

const lagSources = new Map<string, () => Promise<number>>();

/** Reports `read()` as the lag of `consumer` on every scrape; returns the unregister function. */
export function registerLagSource(consumer: string, read: () => Promise<number>): () => void {
  lagSources.set(consumer, read);
  return () => {
    lagSources.delete(consumer);
    consumerLag.remove({ consumer });
  };
}

/** Exchange connectors (producers/connectors/): one `venue` label per venue. */
export const connectorFrames = new Counter({
  name: 'mdp_connector_frames_total',
  help: 'Venue WebSocket frames received, by venue and outcome (ok, duplicate: already published, format_error: refused).',
  labelNames: ['venue', 'outcome'] as const,
  registers,
});

export const connectorEvents = new Counter({
  name: 'mdp_connector_events_published_total',
  help: 'Canonical events a connector handed to the publisher, by venue and event type.',
  labelNames: ['venue', 'event_type'] as const,
  registers,
});

export const connectorResyncs = new Counter({
  name: 'mdp_connector_book_resyncs_total',
  help: 'Local books dropped and rebuilt from a venue snapshot, by venue and reason (gap, format_error, buffer_overflow, stale_snapshot).',
  labelNames: ['venue', 'reason'] as const,
  registers,
});

export const connectorFormatErrors = new Counter({
  name: 'mdp_connector_format_errors_total',
  help: 'Venue frames refused because a field changed shape, by venue and field (array indexes as []).',
  labelNames: ['venue', 'field'] as const,
  registers,
});

export const connectorReconnects = new Counter({
  name: 'mdp_connector_reconnects_total',
  help: 'Venue WebSocket connections lost and retried, by venue.',
  labelNames: ['venue'] as const,
  registers,
});

export const connectorLag = new Histogram({
  name: 'mdp_connector_lag_seconds',
  help: 'Venue event time to stored in MD, seconds, by venue.',
  labelNames: ['venue'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
  registers,
});

export const anonymousErrors = new Counter({
  name: 'mdp_error_log_anonymous_total',
  help: 'Error responses with no account, by whether the error log stored them (sampled per minute) or only counted them.',
  labelNames: ['stored'] as const,
  registers,
});
