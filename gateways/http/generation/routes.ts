/**
 * `POST /data/generate` (sync, or async with `Prefer: respond-async` / `?async=true`),
 * `GET /data/jobs/{job_id}` (status and progress), `GET /artifacts/{file}` (the Parquet, with
 * Range). All need scope `generate`; a job and its artifact are visible to their account only.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contracts/errors.ts';
import { JOB_ID, type JobRecord } from '../../../contracts/jobs.ts';
import type { Bucket } from '../../../platform/kv.ts';
import type { RequireKey } from '../require-key.ts';
import { sendFile } from './artifact-file.ts';
import { completedResponse, type GenerationService } from './generation-service.ts';

export type GenerationRouteDeps = {
  service: GenerationService;
  jobs: Bucket<JobRecord>;
  artifactsDir: string;
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
    const out = await deps.service.generate(req.body, {
      principal: req.principal ?? null,
      requestId: req.id,
      baseUrl: deps.baseUrl(req),
      async: isAsync,
    });
    if (out.status === 'queued') return reply.code(202).header('location', out.status_url).send(out);
    return out;
  });

  app.get<{ Params: { job_id: string } }>('/data/jobs/:job_id', guard, async (req) => {
    const job = await ownJob(req, req.params.job_id);
    const { account_id: _a, artifact: _f, ...view } = job;
    return { ...view, result: job.status === 'completed' ? completedResponse(job, deps.baseUrl(req)) : null };
  });

  const serve = async (
    req: FastifyRequest<{ Params: { file: string } }>,
    reply: import('fastify').FastifyReply,
  ) => {
    const m = /^(sim_batch_[0-9A-Za-z]{16})\.parquet$/.exec(req.params.file);
    if (!m) throw new ApiError('not_found', `no artifact ${req.params.file}`);
    const job = await ownJob(req, m[1] as string);
    // Only a completed job's artifact is served: a failed or running one has none, whatever is on disk.
    if (job.status !== 'completed' || !job.artifact)
      throw new ApiError('not_found', `artifact of ${job.job_id} is not ready (job ${job.status})`);
    const path = join(deps.artifactsDir, job.artifact.file);
    const size = (await stat(path).catch(() => null))?.size;
    if (size === undefined)
      throw new ApiError('not_found', `artifact ${job.artifact.file} is no longer stored`);
    return sendFile(reply, path, size, req.headers.range, job.artifact.file);
  };
  app.get<{ Params: { file: string } }>('/artifacts/:file', guard, serve); // HEAD comes with it
}
