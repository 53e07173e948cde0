/**
 * `POST /data/export` (scope `generate`, the guard and tiers of `POST /data/generate`): answers
 * 202 with the job (`status_url` also in `Location`); the job's status and its file are served by
 * the generation routes (`GET /data/jobs/{job_id}`, `GET /artifacts/{job_id}.parquet|csv`, owner
 * only, with Range). And the MCP tool `export_range` (same arguments, same answer).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { EXPORT_RANGE } from '../../../contracts/mcp-data-tools.ts';
import { defineTool, type ToolDefinition } from '../mcp/tool-registry.ts';
import type { RequireKey } from '../require-key.ts';
import type { ExportService } from './export-service.ts';

export type ExportRouteDeps = {
  service: ExportService;
  requireKey: RequireKey;
  baseUrl: (req: FastifyRequest) => string;
};

export function registerExportRoutes(app: FastifyInstance, deps: ExportRouteDeps): void {
  app.post('/data/export', { preHandler: deps.requireKey('generate') }, async (req, reply) => {
    const job = await deps.service.export(req.body, {
      principal: req.principal ?? null,
      baseUrl: deps.baseUrl(req),
    });
    return reply.code(202).header('location', job.status_url).send(job);
  });
}

/** `export_range`: queues the export and returns the job (poll `status_url`). */
export function exportTool(service: ExportService): ToolDefinition {
  return defineTool({
    spec: EXPORT_RANGE,
    scope: 'generate',
    run: (args, ctx) => service.export(args, { principal: ctx.principal, baseUrl: ctx.baseUrl }),
  });
}
