/**
 * `/openapi.json`: the document of every route this app registered. `collectRoutes` must be called
 * right after the app is created (it hears routes as they are registered); a route's doc is its
 * own `config.openapi`, else the entry for it in `route-docs.ts`.
 */
import type { FastifyInstance } from 'fastify';
import { buildOpenApi, type RegisteredRoute } from './build.ts';
import type { RouteDoc } from './route-doc.ts';
import { ROUTE_DOCS } from './route-docs.ts';

export function collectRoutes(app: FastifyInstance): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) {
      const doc =
        (r.config as { openapi?: RouteDoc } | undefined)?.openapi ?? ROUTE_DOCS[`${method} ${r.url}`];
      routes.push({ method, url: r.url, doc: doc ?? null });
    }
  });
  return routes;
}

export function registerOpenApi(app: FastifyInstance, routes: RegisteredRoute[]): void {
  let cached: object | null = null;
  app.get(
    '/openapi.json',
    {
      config: {
        openapi: { summary: 'This document (OpenAPI 3.1)', tag: 'docs', auth: 'none', errors: [] },
      },
    },
    async () => {
      cached ??= buildOpenApi(routes, { version: process.env.npm_package_version ?? '0.4.7' });
      return cached;
    },
  );
}
