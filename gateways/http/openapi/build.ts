/**
 * OpenAPI 3.1 from the routes as registered: every route appears (a route without a doc is an
 * error the OpenAPI test catches), its request schemas are the zod schemas its handler parses with
 * (`z.toJSONSchema`), and every operation lists its error responses with the catalogue's error
 * body: the ones its doc names, those its authentication implies, and `internal`.
 */
import { z } from 'zod';
import { ApiError, type ErrorCode } from '../../../contracts/errors.ts';
import type { RouteAuth, RouteDoc } from './route-doc.ts';

export type RegisteredRoute = { method: string; url: string; doc: RouteDoc | null };

const AUTH_ERRORS: Record<RouteAuth, ErrorCode[]> = {
  none: [],
  key: ['invalid_key', 'key_revoked', 'forbidden', 'rate_limited'],
  // A cookie session must carry its CSRF token on changes: 403 `forbidden` otherwise.
  session: ['session_invalid', 'forbidden'],
};

const ErrorBody = z
  .object({
    error: z.string().describe('catalogue code'),
    message: z.string(),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('400 and 422 only: {field, reason, issues}'),
    request_id: z.string(),
    timestamp: z.iso.datetime(),
  })
  .describe('The error body of every failure');

const json = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
};

/** `/a/:id/*` → `/a/{id}/{path}`, with the parameters it names. */
function openApiPath(url: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = url
    .replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
      params.push(name);
      return `{${name}}`;
    })
    .replace(/\*$/, () => {
      params.push('path');
      return '{path}';
    });
  return { path, params };
}

function queryParameters(schema: z.ZodType | undefined): object[] {
  if (!schema) return [];
  const js = json(schema, 'input') as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({
    name,
    in: 'query',
    required: js.required?.includes(name) ?? false,
    schema: s,
  }));
}

function responses(doc: RouteDoc): Record<string, object> {
  const out: Record<string, object> = {};
  const status = String(doc.status ?? 200);
  const r = doc.response;
  if (status === '204') out[status] = { description: 'done, no body' };
  else if (r && 'mediaType' in r)
    out[status] = { description: r.description, content: { [r.mediaType]: { schema: {} } } };
  else
    out[status] = {
      description: 'success',
      content: { 'application/json': { schema: r ? json(r as z.ZodType, 'output') : {} } },
    };
  const codes = [...new Set<ErrorCode>([...AUTH_ERRORS[doc.auth], ...doc.errors, 'internal'])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const http = new ApiError(code).row.http;
    byStatus.set(http, [...(byStatus.get(http) ?? []), code]);
  }
  for (const [http, list] of [...byStatus].sort((a, b) => a[0] - b[0]))
    out[String(http)] = {
      description: list.map((c) => `\`${c}\`: ${new ApiError(c).row.message}`).join('; '),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    };
  return out;
}

const SECURITY: Record<RouteAuth, object[]> = {
  none: [],
  key: [{ apiKey: [] }],
  session: [{ session: [] }, { sessionCookie: [] }],
};

export function buildOpenApi(
  routes: readonly RegisteredRoute[],
  info: { version: string; serverUrl?: string },
) {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const doc = route.doc;
    if (!doc || route.method === 'HEAD' || route.method === 'OPTIONS') continue;
    const { path, params } = openApiPath(route.url);
    const op: Record<string, unknown> = {
      summary: doc.summary,
      tags: [doc.tag],
      operationId: `${route.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string = '') => c.toUpperCase())}`,
      security: SECURITY[doc.auth],
      parameters: [
        ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
        ...queryParameters(doc.query),
      ],
      responses: responses(doc),
    };
    if (doc.scope) op.description = `API keys with scopes need \`${doc.scope}\`.`;
    if (doc.body)
      op.requestBody = {
        required: true,
        content: { 'application/json': { schema: json(doc.body, 'input') } },
      };
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: op };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Market data platform: {base_url}',
      version: info.version,
      description:
        'Console, simulation, MCP and the dashboard proxy. Generated from the zod schemas the routes validate with.',
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      schemas: { ErrorBody: json(ErrorBody, 'output') },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        session: {
          type: 'http',
          scheme: 'bearer',
          description: 'console session token (POST /api/v1/console/login)',
        },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'mdp_session',
          description: 'the web console session; state-changing requests also send x-csrf-token',
        },
      },
    },
  };
}
