/**
 * `POST /data/generate` (sync, or async with `Prefer: respond-async` / `?async=true`),
 * `GET /data/jobs/{job_id}` (status and progress), `GET /artifacts/{file}` (the Parquet, with
 * Range). Generation and status need scope `generate`; an artifact may be downloaded with either
 * scope that can create one (`generate`, or `mcp` through `generate_dataset`). A job and its
 * artifact are visible to their account only (another account gets 404). A synchronous request
 * stops waiting when its client disconnects, and at the deadline answers 504 with the job to poll;
 * sending the same request again (or the same `Idempotency-Key`) attaches to that job.
 */
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError, httpErrorBody } from '../../../contracts/errors.ts';
import { JOB_ID, type JobRecord } from '../../../contracts/jobs.ts';
import type { ArtifactStores } from '../../../platform/artifact-store/open.ts';
import type { Bucket } from '../../../platform/kv.ts';
import { holdsScope } from '../../core/scopes.ts';
import { exportResult } from '../export/export-service.ts';
import type { RequireKey } from '../require-key.ts';
import { sendStored } from './artifact-file.ts';
import { completedResponse, type GenerationService, GenerationTimeoutError } from './generation-service.ts';
import { idempotencyKeyOf } from './job-retries.ts';

export type GenerationRouteDeps = {
  service: GenerationService;
  jobs: Bucket<JobRecord>;
  /** The stores artifacts are served from (the one the job record names). */
  stores: ArtifactStores;
  requireKey: RequireKey;
  baseUrl: (req: FastifyRequest) => string;
};

const wantsAsync = (req: FastifyRequest) =>
  /respond-async/i.test(String(req.headers.prefer ?? '')) ||
  (req.query as Record<string, string>)?.async === 'true';

export function registerGenerationRoutes(app: FastifyInstance, deps: GenerationRouteDeps): void {
  const guard = { preHandler: deps.requireKey('generate') };

  /** The caller's own job, or 404 (never reveal another account's job). */
  const ownJob = async (req: FastifyRequest, jobId: string): Promise<JobRecord> => {
    const job = JOB_ID.test(jobId) ? await deps.jobs.get(jobId) : null;
    if (!job || (job.account_id !== null && job.account_id !== req.principal?.accountId))
      throw new ApiError('not_found', `no job ${jobId}`);
    return job;
  };

  app.post('/data/generate', guard, async (req, reply) => {
    const isAsync = wantsAsync(req);
    // The response closing before it was written means the client left: stop waiting for it.
    const left = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableEnded) left.abort();
    };
    reply.raw.once('close', onClose);
    try {
      const out = await deps.service.generate(req.body, {
        principal: req.principal ?? null,
        requestId: req.id,
        baseUrl: deps.baseUrl(req),
        async: isAsync,
        signal: left.signal,
        idempotencyKey: idempotencyKeyOf(req.headers['idempotency-key']),
      });
      if (out.status === 'queued') return reply.code(202).header('location', out.status_url).send(out);
      return out;
    } catch (err) {
      if (!(err instanceof GenerationTimeoutError)) throw err;
      const body = { ...httpErrorBody(err, req.id), job_id: err.jobId, status_url: err.statusUrl };
      return reply.code(err.row.http).header('location', err.statusUrl).send(body);
    } finally {
      reply.raw.off('close', onClose);
    }
  });

  app.get<{ Params: { job_id: string } }>('/data/jobs/:job_id', guard, async (req) => {
    const job = await ownJob(req, req.params.job_id);
    const { account_id: _a, artifact: _f, ...view } = job;
    if (job.status !== 'completed') return { ...view, result: null };
    const result =
      job.kind === 'export'
        ? exportResult(job, deps.baseUrl(req))
        : completedResponse(job, deps.baseUrl(req));
    return { ...view, result };
  });

  const serve = async (
    req: FastifyRequest<{ Params: { file: string } }>,
    reply: import('fastify').FastifyReply,
  ) => {
    // A generation's Parquet, or an export's Parquet or CSV (consumers/export/).
    const m = /^((?:sim_batch|export)_[0-9A-Za-z]{16})\.(parquet|csv)$/.exec(req.params.file);
    if (!m) throw new ApiError('not_found', `no artifact ${req.params.file}`);
    const job = await ownJob(req, m[1] as string);
    // Only a completed job's artifact is served: a failed or running one has none, whatever is on disk.
    if (job.status !== 'completed' || !job.artifact)
      throw new ApiError('not_found', `artifact of ${job.job_id} is not ready (job ${job.status})`);
    if (job.artifact.file !== req.params.file)
      throw new ApiError('not_found', `no artifact ${req.params.file}`);
    const store = await deps.stores.of(job.artifact.storage_backend ?? 'local');
    const type = m[2] === 'csv' ? 'text/csv; charset=utf-8' : undefined;
    return sendStored(reply, store, job.artifact.file, req.headers.range, job.artifact.file, type);
  };
  app.get<{ Params: { file: string } }>(
    '/artifacts/:file',
    { preHandler: creatorKey(deps.requireKey) },
    serve,
  ); // HEAD comes with it
}

/**
 * A key with `generate` or with `mcp`: either can create an artifact (POST /data/generate and
 * `tools/call generate_dataset` need `generate`, POST /mcp/generate_dataset needs `mcp`), so either
 * may download it. One admission (one token); the scope is checked on the admitted principal.
 */
function creatorKey(requireKey: RequireKey): preHandlerAsyncHookHandler {
  const anyKey = requireKey(null);
  return async function creator(this: FastifyInstance, req, reply) {
    await anyKey.call(this, req, reply);
    const scopes = req.principal?.scopes ?? [];
    if (!ARTIFACT_CREATORS.some((s) => holdsScope(scopes, s)))
      throw new ApiError('forbidden', `this key lacks the ${ARTIFACT_CREATORS.join(' or the ')} scope`);
  };
}

/** Scopes that can create an artifact. */
const ARTIFACT_CREATORS = ['generate', 'mcp'] as const;
