/**
 * What every fastify surface does the same way (gateways/core/http-hygiene.ts), over real HTTP:
 * every 429 and 503 carries Retry-After; a body that trickles in ends in 408 and a handler past
 * its deadline in 504, both with the error body; an empty body with a JSON content type is no
 * body, not a malformed one.
 */
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ERROR_CATALOGUE, type ErrorCode } from '../../contracts/errors.ts';
import { createHttpApp } from '../../gateways/core/http-hygiene.ts';
import { expectError } from '../support/http.ts';

let app: FastifyInstance;
let url: string;
const never = new Promise<never>(() => {});

beforeAll(async () => {
  app = createHttpApp({ logger: false, forceCloseConnections: true }, 'test', null, {
    bodyMs: 200,
    handlerMs: 200,
  });
  app.get<{ Params: { code: ErrorCode } }>('/fail/:code', async (req) => {
    throw new ApiError(req.params.code);
  });
  app.get('/hang', async () => never);
  app.get<{ Params: { id: string } }>('/items/:id', async (req) => ({ id: req.params.id }));
  app.post('/echo', async (req) => ({ body: req.body ?? null }));
  app.delete('/thing', async (_req, reply) => reply.code(204).send());
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
});

describe('Retry-After', () => {
  const busy = Object.values(ERROR_CATALOGUE).filter((r) => r.http === 429 || r.http === 503);

  it.each(busy.map((r) => [r.code, r.http]))(
    '%s (%i) carries Retry-After in whole seconds',
    async (code, status) => {
      const res = await fetch(`${url}/fail/${code}`);
      await expectError(res, status as number, code as string);
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    },
  );

  it('is absent from other errors', async () => {
    const res = await fetch(`${url}/fail/forbidden`);
    await expectError(res, 403, 'forbidden');
    expect(res.headers.get('retry-after')).toBeNull();
  });
});

describe('deadlines', () => {
  it('answers a handler past its deadline with 504 and the error body', async () => {
    await expectError(await fetch(`${url}/hang`), 504, 'upstream_timeout');
  });

  it('answers a body that trickles in with 408 and the error body, and closes the connection', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      let got = '';
      socket.on('data', (d) => {
        got += d.toString();
      });
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
      // 100 bytes announced, 10 sent, the rest never comes.
      socket.write(
        'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":"bbbb',
      );
    });
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toMatch(/content-type: application\/json/);
    const json = JSON.parse(body.startsWith('{') ? body : (body.split('\r\n')[1] ?? ''));
    expect(json).toMatchObject({ error: 'request_timeout', request_id: expect.stringMatching(/^req_/) });
  });

  it('leaves a body that arrives in time alone', async () => {
    const res = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await res.json()).toEqual({ body: { a: 1 } });
  });
});

describe('an empty body with a JSON content type', () => {
  it('is no body: DELETE succeeds, POST sees no body', async () => {
    const del = await fetch(`${url}/thing`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
    });
    expect(del.status).toBe(204);
    const post = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(await post.json()).toEqual({ body: null });
  });

  it('is still told apart from malformed JSON (400 with the error body)', async () => {
    const res = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    await expectError(res, 400, 'parse_error');
  });
});

describe('router failures', () => {
  it.each([
    ['a malformed path segment', '/items/%zz'],
    ['a path segment past 100 characters', `/items/${'x'.repeat(101)}`],
  ])('%s → 404 with the error body', async (_name, path) => {
    await expectError(await fetch(`${url}${path}`), 404, 'not_found');
  });
});
