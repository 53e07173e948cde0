/**
 * The stream client in a real browser: `@mdp/client` bundled for the browser platform (esbuild
 * fails on any Node-only import), loaded into headless Chromium on the gateway's own origin, reads
 * the unified stream from a real gateway with fetch + its SSE parser, resuming from a position;
 * `@mdp/client/disk` bundled the same way reads a real disk-sync edge over the browser's own
 * WebSocket (key as `?api_key=`), resuming from a position too.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { type InProcessDisksync, startInProcessDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { publishAtRate } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  existsSync,
);
let stack: TestStack;
let gw: TestGateway;
let disk: InProcessDisksync;
let browser: Browser | null = null;

beforeAll(async () => {
  stack = await startStack();
  gw = await startTestGateway(stack.server.url, {}, { guard: 'keys' });
  disk = await startInProcessDisksync(stack.server.url);
});

afterAll(async () => {
  await browser?.close();
  await disk?.close();
  await gw?.close();
  await stack?.close();
});

it('bundles for the browser with no Node-only import', async () => {
  const out = await build({
    entryPoints: [join(import.meta.dirname, '../../clients/typescript/src/index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'mdp',
    write: false,
    logLevel: 'silent',
  });
  expect(out.errors).toEqual([]);
  expect(out.outputFiles[0]?.text).not.toMatch(/require\(["']node:/);
});

it.skipIf(!CHROMIUM)(
  'streams and resumes in headless Chromium',
  async () => {
    const bundle = await build({
      entryPoints: [join(import.meta.dirname, '../../clients/typescript/src/index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'mdp',
      write: false,
      logLevel: 'silent',
    });
    const { key } = await stack.accounts.key('pro');
    const publisher = publishAtRate(stack.nats.js, ['BTC', 'ETH'], 100);
    await eventually(
      async () => (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq >= 40,
      20_000,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM as string, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    await page.goto(`${gw.url}/healthz`); // the gateway's origin: no CORS in the way
    await page.addScriptTag({ content: bundle.outputFiles[0]?.text as string });
    const seqs = await page.evaluate(async (apiKey) => {
      const { stream } = (
        globalThis as unknown as { mdp: typeof import('../../clients/typescript/src/index.ts') }
      ).mdp;
      const got: number[] = [];
      const s = stream({ url: location.origin, key: apiKey, coins: ['BTC'], from: 10 });
      for await (const item of s) {
        if (item.type === 'event') got.push(item.seq);
        if (got.length === 15) break;
      }
      return got;
    }, key);
    await publisher.stop();
    expect(seqs).toHaveLength(15);
    expect(seqs[0]).toBeGreaterThan(10);
    expect(seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number))).toBe(true);
  },
  120_000,
);

it.skipIf(!CHROMIUM)(
  'streamDisk reads and resumes over the browser WebSocket in headless Chromium',
  async () => {
    const bundle = await build({
      entryPoints: [join(import.meta.dirname, '../../clients/typescript/src/disk.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'mdpDisk',
      write: false,
      logLevel: 'silent',
    });
    const publisher = publishAtRate(stack.nats.js, ['BTC', 'ETH'], 100);
    await eventually(
      async () => (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq >= 40,
      20_000,
    );
    browser ??= await chromium.launch({ executablePath: CHROMIUM as string, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    await page.goto(`${gw.url}/healthz`);
    await page.addScriptTag({ content: bundle.outputFiles[0]?.text as string });
    const url = disk.url.replace(/^http/, 'ws');
    const seqs = await page.evaluate(async (diskUrl) => {
      const { streamDisk } = (
        globalThis as unknown as { mdpDisk: typeof import('../../clients/typescript/src/disk.ts') }
      ).mdpDisk;
      if (typeof WebSocket !== 'function') throw new Error('no browser WebSocket');
      const got: number[] = [];
      const s = streamDisk({ url: diskUrl, key: 'open-guard', coins: ['BTC'], from: 10 });
      for await (const item of s) {
        if (item.type === 'event') got.push(item.seq);
        if (got.length === 15) break;
      }
      return got;
    }, url);
    await publisher.stop();
    expect(seqs).toHaveLength(15);
    expect(seqs[0]).toBeGreaterThan(10);
    expect(seqs.every((q, i) => i === 0 || q > (seqs[i - 1] as number))).toBe(true);
  },
  120_000,
);
