/**
 * The web console (`/console`, `/console/<page>`) and the API docs page (`/docs`): static files
 * from `console-ui/`, with the chart library and Swagger UI served from their npm packages in
 * `node_modules` (no CDN, nothing fetched at run time). Only files listed here are served, read once
 * and kept in memory (a few MB with their compressed forms), so no path from a request ever reaches
 * the file system. Each carries an ETag (304 on a current copy) and goes brotli- or gzip-compressed
 * to a browser that takes it.
 * Pages run under a strict Content-Security-Policy: scripts and styles of this origin only.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
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
  'line-view.js': join(UI_DIR, 'line-view.js'),
  'candle-view.js': join(UI_DIR, 'candle-view.js'),
  'candles.js': join(UI_DIR, 'candles.js'),
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

/** A file as served: its bytes, its ETag, and its compressed forms, each made on first request. */
type Served = { body: Buffer; etag: string; br?: Buffer; gzip?: Buffer };
const files = new Map<string, Served>();
function file(path: string): Served {
  let served = files.get(path);
  if (!served) {
    const body = readFileSync(path);
    served = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    files.set(path, served);
  }
  return served;
}

/** The encoding to send for an Accept-Encoding header: brotli, then gzip, else none (q=0 refuses). */
function encodingFor(accept: string | undefined): 'br' | 'gzip' | null {
  const offered = new Map(
    (accept ?? '').split(',').map((part) => {
      const [name = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return [name, q ? Number(q.slice(2)) : 1] as const;
    }),
  );
  const takes = (e: string) => (offered.get(e) ?? offered.get('*') ?? 0) > 0;
  return takes('br') ? 'br' : takes('gzip') ? 'gzip' : null;
}

/**
 * Static files are revalidated on every load (`no-cache`) and answered 304 when the browser's
 * copy is current (ETag), and sent compressed when the browser takes it: the 1.7 MB Swagger bundle
 * travels once, about 0.4 MB, instead of on every page load.
 */
function send(reply: FastifyReply, path: string, csp = CSP): FastifyReply {
  const served = file(path);
  reply
    .type(TYPES[path.split('.').pop() ?? ''] ?? 'application/octet-stream')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-cache')
    .header('etag', served.etag)
    .header('vary', 'accept-encoding');
  const match = reply.request.headers['if-none-match'];
  if (match?.split(',').some((t) => t.trim().replace(/^W\//, '') === served.etag))
    return reply.code(304).send();
  const encoding = encodingFor(reply.request.headers['accept-encoding']);
  if (encoding === 'br') {
    served.br ??= brotliCompressSync(served.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
    return reply.header('content-encoding', 'br').send(served.br);
  }
  if (encoding === 'gzip') {
    served.gzip ??= gzipSync(served.body, { level: 9 });
    return reply.header('content-encoding', 'gzip').send(served.gzip);
  }
  return reply.send(served.body);
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
