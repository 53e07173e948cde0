/**
 * Fail closed at the edge: with the real guard in front of `{base_url}` and its nats-server
 * killed (-9), the shared rate limiter cannot be read, so Basic and Pro keys are refused with 503,
 * the full error body and `Retry-After`, while Quant (unlimited, never touches the limiter) is
 * still admitted on its cached key. Each key is used once before the kill, so the refusal is the
 * limiter's and not an unknown key.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Tier } from '../../contracts/limits.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let keys: Record<Tier, string>;

beforeAll(async () => {
  stack = await startStack();
  keys = await stack.accounts.tierKeys();
});

afterAll(async () => {
  await stack?.close().catch(() => {});
});

const presets = (key: string) => fetch(`${stack.http.url}/mcp/presets`, { headers: { 'x-api-key': key } });

it('refuses Basic and Pro with 503 and Retry-After when NATS is gone, and admits Quant', async () => {
  for (const plan of ['basic', 'pro', 'quant'] as const) expect((await presets(keys[plan])).status).toBe(200);

  await stack.server.kill('SIGKILL');

  for (const plan of ['basic', 'pro'] as const) {
    // Until the limiter notices (its lease calls time out), answers may still come from leased tokens.
    const deadline = Date.now() + 30_000;
    let res = await presets(keys[plan]);
    while (res.status !== 503) {
      if (Date.now() > deadline) throw new Error(`${plan} key still ${res.status} 30 s after NATS died`);
      await new Promise((r) => setTimeout(r, 100));
      res = await presets(keys[plan]);
    }
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1, `${plan} Retry-After`).toBe(true);
    const body = await res.json();
    expect(body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    expect(body.request_id).toMatch(/\S/);
    expect(Date.parse(body.timestamp)).not.toBeNaN();
  }
  expect((await presets(keys.quant)).status).toBe(200);
});
