/**
 * `/openapi.json` and `/docs`: OpenAPI 3.1 generated from the routes as registered. Every route the
 * `{base_url}` app registers (dashboard proxy included) appears with its error responses (each
 * with the catalogue's error body, `internal` everywhere, the authentication's own errors where a
 * key or a session is needed), and the documented request schemas are the ones the handlers
 * parse with: a body the document calls invalid is refused by the route.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServiceKey, type ServiceKey } from '../../app/service-key.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

type Operation = {
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  security: object[];
  requestBody?: { content: { 'application/json': { schema: { required?: string[]; properties: object } } } };
};
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

let base: BaseStack;
let accounts: TestAccounts;
let http: TestHttp;
let service: ServiceKey;

beforeAll(async () => {
  const config = testConfig();
  base = await startBase(config);
  const { nats } = base;
  accounts = base.accounts;
  service = await createServiceKey(accounts.service);
  http = await startTestHttp(
    nats,
    config,
    accounts,
    {
      upstream: () => 'http://127.0.0.1:9',
      serviceKey: () => service.key,
    },
    { status: true },
  );
});

afterAll(async () => {
  await http?.close();
  await service?.revoke();
  await base?.close();
});

const toOpenApi = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{path}');

it('documents every registered route with its error responses', async () => {
  const res = await fetch(`${http.url}/openapi.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as Doc;
  expect(doc.openapi).toBe('3.1.0');
  const routes = http.routes;
  expect(routes.length).toBeGreaterThan(20);
  const missing = routes
    .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
    .filter((r) => !doc.paths[toOpenApi(r.url)]?.[r.method.toLowerCase()])
    .map((r) => `${r.method} ${r.url}`);
  expect(missing).toEqual([]);
  for (const path of ['/api/v1/status', '/api/v1/public/status', '/api/v1/status/maintenance/{id}'])
    expect(Object.keys(doc.paths), 'the status API is documented').toContain(path);
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const errors = Object.entries(op.responses).filter(([s]) => Number(s) >= 400);
      expect(
        errors.map(([s]) => s),
        `${method} ${path}`,
      ).toContain('500');
      for (const [, r] of errors)
        expect(r.content?.['application/json']?.schema.$ref).toBe('#/components/schemas/ErrorBody');
      if (op.security.length > 0) expect(Object.keys(op.responses)).toContain('401');
    }
});

it('documents the schemas the handlers validate with', async () => {
  const doc = (await (await fetch(`${http.url}/openapi.json`)).json()) as Doc;
  const register = doc.paths['/api/v1/console/register']?.post;
  const schema = register?.requestBody?.content['application/json'].schema;
  expect(schema?.required).toEqual(expect.arrayContaining(['email', 'password']));
  expect(Object.keys(schema?.properties ?? {})).toEqual(expect.arrayContaining(['utm_source', 'plan']));
  expect(Object.keys(register?.responses ?? {})).toEqual(
    expect.arrayContaining(['201', '400', '409', '422', '429']),
  );
  // A field the document does not list is refused by the route (the same strict schema).
  const res = await fetch(`${http.url}/api/v1/console/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'x@example.com', password: 'C0rrect-Horse-Battery', nickname: 'x' }),
  });
  expect(res.status).toBe(422);
  const patch = doc.paths['/api/v1/console/keys/{key_id}']?.patch;
  expect(Object.keys(patch?.requestBody?.content['application/json'].schema.properties ?? {})).toEqual([
    'name',
    'scopes',
  ]);
});

it('serves the docs page and Swagger UI from the npm package, no CDN', async () => {
  const page = await fetch(`${http.url}/docs`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('/console/assets/swagger-ui-bundle.js');
  expect(html).not.toMatch(/https?:\/\//);
  const bundle = await fetch(`${http.url}/console/assets/swagger-ui-bundle.js`);
  expect(bundle.status).toBe(200);
  expect((await bundle.text()).length).toBeGreaterThan(100_000);
});
