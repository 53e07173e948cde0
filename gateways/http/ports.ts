/**
 * What the `{base_url}` routes need from the rest of the platform, as interfaces, so each route
 * plugin can be built and tested on its own.
 */
import type { Principal } from '../core/guard.ts';

/** Spec "Batch generation response". */
export type GenerateResponse = {
  status: 'completed';
  download_url: string;
  row_count: number;
  storage_backend: 'local' | 'nats';
  content_length_bytes: number;
  job_id: string;
  manifest_hash: string;
};

/** Answer to an asynchronous generation request. */
export type JobAccepted = { status: 'queued'; job_id: string; status_url: string; manifest_hash: string };

export type GenerationPort = {
  /**
   * Validates the spec's generation request body (throws ApiError 400/422 with field details),
   * runs it (waiting for completion unless `async`), and answers per the spec.
   */
  generate(
    body: unknown,
    ctx: { principal: Principal | null; requestId: string; baseUrl: string; async: boolean },
  ): Promise<GenerateResponse | JobAccepted>;
};

export type HealthPort = {
  /** `{status: 'ok' | 'degraded', ...}`; never throws. */
  health(): Promise<{
    status: 'ok' | 'degraded';
    version: string;
    nats: 'connected' | 'disconnected';
    [k: string]: unknown;
  }>;
};
