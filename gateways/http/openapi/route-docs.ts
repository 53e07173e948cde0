/**
 * Docs of the `{base_url}` routes registered without their own `config.openapi`, keyed by
 * `METHOD url` exactly as fastify registers them. Request schemas are the ones the handlers parse
 * with (imported, never copied). A route missing here and in its own config fails the OpenAPI test.
 */
import { ExportRequest } from '../../../contracts/export.ts';
import { SimulationManifest } from '../../../contracts/manifest.ts';
import { LiveQuery } from '../live-sim/live-route.ts';
import type { RouteDoc } from './route-doc.ts';

const sse = { mediaType: 'text/event-stream', description: 'Server-Sent Events' } as const;
const parquet = {
  mediaType: 'application/vnd.apache.parquet',
  description: 'the Parquet file (Range supported: 206, 416)',
} as const;
const json = { mediaType: 'application/json', description: 'JSON' } as const;
const mcp = { tag: 'mcp', auth: 'key', scope: 'mcp' } as const;
const discovery = (summary: string): RouteDoc => ({
  summary,
  tag: 'mcp discovery',
  auth: 'none',
  response: json,
  errors: [],
});

export const ROUTE_DOCS: Record<string, RouteDoc> = {
  'POST /data/generate': {
    summary: 'Generate a Parquet dataset (sync; async with Prefer: respond-async or ?async=true → 202)',
    tag: 'generation',
    auth: 'key',
    scope: 'generate',
    body: SimulationManifest,
    response: json,
    errors: [
      'invalid_params',
      'unprocessable',
      'quota_exceeded',
      'generation_failed',
      'generation_timeout',
      'storage_full',
    ],
  },
  'POST /data/export': {
    summary:
      'Export stored events of a time range as Parquet or CSV (DuckDB), as an asynchronous job → 202 with status_url',
    tag: 'generation',
    auth: 'key',
    scope: 'generate',
    body: ExportRequest,
    response: json,
    errors: ['invalid_params', 'unprocessable', 'invalid_time_range', 'quota_exceeded', 'storage_full'],
  },
  'GET /data/jobs/:job_id': {
    summary: 'A generation job: queued → running → completed | failed, with progress',
    tag: 'generation',
    auth: 'key',
    scope: 'generate',
    response: json,
    errors: ['not_found'],
  },
  'GET /artifacts/:file': {
    summary: 'A generated artifact or an export (owner only)',
    tag: 'generation',
    auth: 'key',
    scope: 'generate',
    response: parquet,
    errors: ['not_found', 'range_unsatisfiable'],
  },
  'GET /stream/live': {
    summary: 'The live synthetic stream of a (symbol, seed) session',
    tag: 'simulation',
    auth: 'key',
    scope: 'stream',
    query: LiveQuery,
    response: sse,
    errors: ['invalid_params', 'subscription_limit'],
  },
  'GET /api/v1/unified/*': {
    summary: 'Dashboard proxy: the unified stream for a console session (Pro and Quant; cookie or bearer)',
    tag: 'dashboard',
    auth: 'session',
    response: sse,
    errors: [
      'tier_restricted',
      'subscription_limit',
      'invalid_params',
      'coin_not_found',
      'upstream_unavailable',
      'feed_unavailable',
    ],
  },
  'GET /': discovery('Service description'),
  'GET /mcp/tools/list': discovery('MCP tools with their input schemas'),
  'GET /.well-known/mcp.json': discovery('MCP server card'),
  'GET /.well-known/mcp-config': discovery('MCP session configuration schema'),
  'GET /mcp/manifest': { ...mcp, summary: 'MCP tool manifest', response: json, errors: [] },
  'POST /mcp': {
    ...mcp,
    scope: undefined,
    summary: 'MCP JSON-RPC 2.0 (Streamable HTTP, JSON mode): initialize, tools/list, tools/call, ping',
    response: json,
    errors: ['parse_error', 'invalid_request', 'batch_too_large', 'method_not_allowed'],
  },
  'GET /mcp': { ...mcp, scope: undefined, summary: 'Not served (405)', errors: ['method_not_allowed'] },
  'DELETE /mcp': { ...mcp, scope: undefined, summary: 'Not served (405)', errors: ['method_not_allowed'] },
  'GET /mcp/caches/export/:cache_key': {
    ...mcp,
    summary: 'A cache exported as Parquet',
    response: parquet,
    errors: ['not_found', 'range_unsatisfiable'],
  },
  'GET /mcp/caches/stream/:cache_key': {
    ...mcp,
    summary: 'Replay a cache as SSE (Last-Event-ID resumes)',
    response: sse,
    errors: ['not_found', 'invalid_params'],
  },
  'DELETE /mcp/caches': {
    ...mcp,
    summary: 'Delete all your caches (?confirm=true)',
    response: json,
    errors: ['invalid_params'],
  },
  'GET /metrics': {
    summary: 'Prometheus metrics (mdp_*)',
    tag: 'operations',
    auth: 'key',
    scope: 'metrics',
    response: { mediaType: 'text/plain', description: 'Prometheus exposition format' },
    errors: [],
  },
};
