/**
 * The web console (`/console`, `/console/<page>`) and the API docs page (`/docs`): static files
 * from `console-ui/`, with the chart library and Swagger UI served from their npm packages in
 * `node_modules` (no CDN, nothing fetched at run time). Only files listed here are served, read once
 * and kept in memory (a few hundred kB), so no path from a request ever reaches the file system.
 * Pages run under a strict Content-Security-Policy: scripts and styles of this origin only.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';

const UI_DIR = join(dirname(fileURLToPath(import.meta.url)), 'console-ui');
const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Console pages by name (`/console/<page>`); `/console` is the login page. */
export const CONSOLE_PAGES = ['login', 'register', 'keys', 'account', 'market', 'status'] as const;

const ASSETS: Record<string, string> = {
  'console.css': join(UI_DIR, 'console.css'),
  'common.js': join(UI_DIR, 'common.js'),
  'chart-feed.js': join(UI_DIR, 'chart-feed.js'),
  ...Object.fromEntries(CONSOLE_PAGES.map((p) => [`${p}.js`, join(UI_DIR, `${p}.js`)])),
  'docs.js': join(UI_DIR, 'docs.js'),
  'logo.svg': join(UI_DIR, 'logo.svg'),
  'lightweight-charts.js': join(
    packageDir('lightweight-charts'),
    'dist/lightweight-charts.standalone.production.js',
  ),
  'swagger-ui.css': join(packageDir('swagger-ui-dist'), 'swagger-ui.css'),
  'swagger-ui-bundle.js': join(packageDir('swagger-ui-dist'), 'swagger-ui-bundle.js'),
};

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
// Swagger UI sets inline styles on its elements.
const DOCS_CSP = CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");

const files = new Map<string, Buffer>();
function file(path: string): Buffer {
  let body = files.get(path);
  if (!body) {
    body = readFileSync(path);
    files.set(path, body);
  }
  return body;
}

function send(reply: FastifyReply, path: string, csp = CSP): FastifyReply {
  return reply
    .type(TYPES[path.split('.').pop() ?? ''] ?? 'application/octet-stream')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-cache')
    .send(file(path));
}

const page = (name: string) => join(UI_DIR, `${name}.html`);
const doc = (summary: string) => ({
  openapi: {
    summary,
    tag: 'web',
    auth: 'none' as const,
    response: { mediaType: 'text/html', description: 'page' },
    errors: [],
  },
});

export function registerConsoleUi(app: FastifyInstance): void {
  app.get('/console', { config: doc('The web console (login)') }, async (_req, reply) =>
    send(reply, page('login')),
  );
  app.get<{ Params: { page: string } }>(
    '/console/:page',
    { config: { openapi: { ...doc('A page of the web console').openapi, errors: ['not_found'] } } },
    async (req, reply) => {
      const name = req.params.page;
      if (!(CONSOLE_PAGES as readonly string[]).includes(name))
        throw new ApiError('not_found', `no console page ${name}; pages: ${CONSOLE_PAGES.join(', ')}`);
      return send(reply, page(name));
    },
  );
  app.get<{ Params: { file: string } }>(
    '/console/assets/:file',
    {
      config: {
        openapi: {
          summary: 'Console scripts, styles and the chart library',
          tag: 'web',
          auth: 'none',
          response: { mediaType: 'text/javascript', description: 'a static asset' },
          errors: ['not_found'],
        },
      },
    },
    async (req, reply) => {
      const path = Object.hasOwn(ASSETS, req.params.file) ? ASSETS[req.params.file] : undefined;
      if (!path) throw new ApiError('not_found', `no asset ${req.params.file}`);
      return send(reply, path, req.params.file.startsWith('swagger') ? DOCS_CSP : CSP);
    },
  );
  app.get(
    '/docs',
    { config: doc('API documentation (Swagger UI over /openapi.json)') },
    async (_req, reply) => send(reply, page('docs'), DOCS_CSP),
  );
}
