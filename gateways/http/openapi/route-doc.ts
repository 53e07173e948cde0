/**
 * What the OpenAPI document says about one route, attached where the route is registered
 * (`config: { openapi }`) or, for routes registered elsewhere, in `route-docs.ts`. `body` and
 * `query` are the very zod schemas the handler parses with, so the document cannot drift from
 * the validation.
 */
import type { z } from 'zod';
import type { Scope } from '../../../contracts/accounts.ts';
import type { ErrorCode } from '../../../contracts/errors.ts';

/** How a caller authenticates: an API key (`x-api-key`), a console session (bearer or cookie), or nothing. */
export type RouteAuth = 'none' | 'key' | 'session';

export type RouteDoc = {
  summary: string;
  tag: string;
  auth: RouteAuth;
  /** The scope a key needs (auth `key`). */
  scope?: Scope;
  body?: z.ZodType;
  query?: z.ZodType;
  /** Success status (default 200) and its body: a zod schema, or a media type for non-JSON answers. */
  status?: number;
  response?: z.ZodType | { mediaType: string; description: string };
  /** Errors of this route beyond those its `auth` implies (and `internal`, which every route has). */
  errors: readonly ErrorCode[];
};

declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: RouteDoc;
  }
}
