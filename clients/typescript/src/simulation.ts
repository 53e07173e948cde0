/**
 * The simulation service (`{base_url}`, header `X-API-Key`): asynchronous generation jobs with
 * progress and a download stream, normalization, funding, venues, caches. Every failure is an
 * MdpError with the error body's `code` and `request_id`. fetch only: browsers use it too.
 */
import { sleep } from './backoff.ts';
import { MdpError } from './errors.ts';
import { asDownload, type Download, HttpClient, type HttpClientOptions } from './http.ts';
import type {
  CacheManifest,
  CacheStats,
  Exchange,
  FundingRequestInput,
  FundingResult,
  GenerateRequest,
  GenerateResult,
  JobAccepted,
  JobView,
  NormalizeRequest,
  NormalizeResult,
  Preset,
  VenueDetails,
} from './simulation-types.ts';
import { type ReplayEnd, readReplay } from './sse-replay.ts';
import type { Position, StreamEvent } from './stream-types.ts';

export type SimulationClientOptions = HttpClientOptions & { key: string };

export type WaitOptions = {
  /** Called with every status read while the job runs. */
  onProgress?: (job: JobView) => void;
  /** Poll period, ms (default 500). */
  intervalMs?: number;
  signal?: AbortSignal;
};

/** A submitted generation job. */
export class GenerationJob {
  constructor(
    private readonly client: SimulationClient,
    readonly accepted: JobAccepted,
  ) {}

  get jobId(): string {
    return this.accepted.job_id;
  }

  get manifestHash(): string {
    return this.accepted.manifest_hash;
  }

  status(signal?: AbortSignal): Promise<JobView> {
    return this.client.job(this.jobId, signal);
  }

  /** Polls until the job completes (its result) or fails (MdpError with the job's error code). */
  async wait(opts: WaitOptions = {}): Promise<GenerateResult> {
    for (;;) {
      const job = await this.status(opts.signal);
      opts.onProgress?.(job);
      if (job.status === 'completed' && job.result) return job.result;
      if (job.status === 'failed') {
        const e = job.error ?? { code: 'generation_failed', message: 'generation failed' };
        throw new MdpError(e.code as 'generation_failed', e.message, { status: null });
      }
      if (opts.signal?.aborted) throw new MdpError('aborted', 'stopped waiting for the job');
      await sleep(opts.intervalMs ?? 500, opts.signal);
    }
  }
}

export class SimulationClient {
  readonly http: HttpClient;

  constructor(opts: SimulationClientOptions) {
    this.http = new HttpClient(opts, () => ({ 'x-api-key': opts.key }));
  }

  /** Submits an asynchronous generation job (`Prefer: respond-async`). */
  async generate(request: GenerateRequest, signal?: AbortSignal): Promise<GenerationJob> {
    const accepted = await this.http.json<JobAccepted>('POST', '/data/generate', {
      body: request,
      headers: { prefer: 'respond-async' },
      ...(signal ? { signal } : {}),
    });
    return new GenerationJob(this, accepted);
  }

  job(jobId: string, signal?: AbortSignal): Promise<JobView> {
    return this.http.json<JobView>(
      'GET',
      `/data/jobs/${encodeURIComponent(jobId)}`,
      signal ? { signal } : {},
    );
  }

  /** The artifact of a completed job, as a stream (`content_length_bytes` = `contentLength`). */
  async download(result: Pick<GenerateResult, 'download_url'>, signal?: AbortSignal): Promise<Download> {
    return asDownload(await this.http.send('GET', result.download_url, signal ? { signal } : {}));
  }

  normalize(request: NormalizeRequest, signal?: AbortSignal): Promise<NormalizeResult> {
    return this.http.json('POST', '/mcp/normalize', { body: request, ...(signal ? { signal } : {}) });
  }

  funding(request: FundingRequestInput): Promise<FundingResult> {
    return this.http.json('POST', '/mcp/simulate_funding_regime', { body: request });
  }

  venues(exchange: Exchange): Promise<VenueDetails> {
    return this.http.json('GET', `/mcp/venues/${encodeURIComponent(exchange)}`);
  }

  async presets(): Promise<Preset[]> {
    const body = await this.http.json<{ presets: Preset[] } | Preset[]>('GET', '/mcp/presets');
    return Array.isArray(body) ? body : body.presets;
  }

  readonly caches = {
    stats: (): Promise<CacheStats> => this.http.json('GET', '/mcp/caches/stats'),
    manifest: (cacheKey: string): Promise<CacheManifest> =>
      this.http.json('GET', `/mcp/caches/${encodeURIComponent(cacheKey)}/manifest`),
    /** The cache as Parquet, streamed. */
    export: async (cacheKey: string, signal?: AbortSignal): Promise<Download> =>
      asDownload(
        await this.http.send(
          'GET',
          `/mcp/caches/export/${encodeURIComponent(cacheKey)}`,
          signal ? { signal } : {},
        ),
      ),
    /** Replays the cache's events in order (after `from`, when given); returns its end record. */
    replay: (
      cacheKey: string,
      opts: { from?: Position; signal?: AbortSignal } = {},
    ): AsyncGenerator<{ seq: Position; event: StreamEvent }, ReplayEnd | null, undefined> =>
      this.replay(cacheKey, opts),
    delete: (cacheKey: string): Promise<void> =>
      this.http.json('DELETE', `/mcp/caches/${encodeURIComponent(cacheKey)}`),
    clear: (): Promise<{ deleted: number }> =>
      this.http.json('DELETE', '/mcp/caches', { query: { confirm: true } }),
  };

  private async *replay(
    cacheKey: string,
    opts: { from?: Position; signal?: AbortSignal },
  ): AsyncGenerator<{ seq: Position; event: StreamEvent }, ReplayEnd | null, undefined> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (opts.from !== undefined) headers['last-event-id'] = String(opts.from);
    const res = await this.http.send('GET', `/mcp/caches/stream/${encodeURIComponent(cacheKey)}`, {
      headers,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return yield* readReplay(asDownload(res).body);
  }
}
