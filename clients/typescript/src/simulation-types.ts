/** Request and response types of the simulation service, from the contracts where they exist. */

import type { MarketEvent } from '@mdp/contracts/events';
import type { JobRecord } from '@mdp/contracts/jobs';
import type { NormalizeBody } from '@mdp/contracts/normalize';
import type { z } from 'zod';

export type { CacheManifest } from '@mdp/contracts/caches';
export type { FundingRequestInput, FundingResult } from '@mdp/contracts/funding';
export type { SimulationManifestInput as GenerateRequest } from '@mdp/contracts/manifest';
export type { Preset } from '@mdp/contracts/presets';
export type { Exchange, VenueDetails } from '@mdp/contracts/venues';

/** Spec "Batch generation response". */
export type GenerateResult = {
  status: 'completed';
  download_url: string;
  row_count: number;
  storage_backend: 'local';
  content_length_bytes: number;
  job_id: string;
  manifest_hash: string;
};

/** Answer to an asynchronous generation request. */
export type JobAccepted = { status: 'queued'; job_id: string; status_url: string; manifest_hash: string };

/** `GET /data/jobs/{job_id}`. */
export type JobView = Omit<JobRecord, 'account_id' | 'artifact'> & { result: GenerateResult | null };

export type NormalizeRequest = z.input<typeof NormalizeBody>;

export type NormalizeResult = {
  source: string;
  normalizer_version: string;
  events: MarketEvent[];
  rejected: { index: number; error: string; message: string }[];
  cache_key?: string;
  published?: number;
};

/** One cache in `GET /mcp/caches/stats`. */
export type CacheSummary = {
  cache_key: string;
  source: string;
  symbol: string;
  events: number;
  first_timestamp_ms: number;
  last_timestamp_ms: number;
  raw_json_bytes: number;
  stored_bytes: number;
  compression_ratio: number | null;
  created_at: string;
};

export type CacheStats = {
  caches: CacheSummary[];
  totals: {
    caches: number;
    events: number;
    raw_json_bytes: number;
    stored_bytes: number;
    compression_ratio: number | null;
  };
};
