/**
 * The console's static files are cached and compressed as a browser expects: each answer carries
 * an ETag, a request with that ETag in If-None-Match is 304 with no body, and a browser that takes
 * brotli or gzip gets the file compressed (decompressing to exactly the file), one that takes
 * neither gets it as it is. The 1.7 MB Swagger bundle is the case that matters.
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  http = await startTestHttp(nats, config, accounts);
});

afterAll(async () => {
  await http?.close();
  await base?.close();
});

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** A GET with exactly these headers (fetch would add and undo Accept-Encoding itself). */
function raw(path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    get(`${http.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    }).on('error', reject);
  });
}

const require = createRequire(import.meta.url);
const swagger = readFileSync(
  join(dirname(require.resolve('swagger-ui-dist/package.json')), 'swagger-ui-bundle.js'),
);

describe('console static files', () => {
  it('answers 304 to a current copy, and the file again to a stale one', async () => {
    const first = await raw('/console/assets/swagger-ui-bundle.js', {});
    expect(first.status).toBe(200);
    expect(first.body.equals(swagger)).toBe(true);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await raw('/console/assets/swagger-ui-bundle.js', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    const weak = await raw('/console/assets/swagger-ui-bundle.js', { 'if-none-match': `W/${etag}` });
    expect(weak.status).toBe(304);
    const stale = await raw('/console/assets/swagger-ui-bundle.js', { 'if-none-match': '"not-it"' });
    expect(stale.status).toBe(200);
    const page = await raw('/console', {});
    expect(page.headers.etag).not.toBe(etag);
    expect((await raw('/console', { 'if-none-match': page.headers.etag as string })).status).toBe(304);
  });

  it('sends brotli or gzip to a browser that takes it, and the file as it is otherwise', async () => {
    const br = await raw('/console/assets/swagger-ui-bundle.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.body.length).toBeLessThan(swagger.length / 3);
    expect(brotliDecompressSync(br.body).equals(swagger)).toBe(true);
    const gz = await raw('/console/assets/swagger-ui-bundle.js', { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(swagger)).toBe(true);
    const none = await raw('/console/assets/swagger-ui-bundle.js', { 'accept-encoding': 'identity' });
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.body.equals(swagger)).toBe(true);
  });
});
