/**
 * The stream client in a real browser: `@mdp/client` bundled for the browser platform (esbuild
 * fails on any Node-only import), loaded into headless Chromium on the gateway's own origin, reads
 * the unified stream from a real gateway with fetch + its SSE parser, resuming from a position and,
 * through a relay whose connections the test cuts (cut-proxy.ts), across a cut: what it yields is
 * compared with the BTC sequences the MD stream stores after `from` (stored-seqs.ts);
 * `@mdp/client/disk` bundled the same way reads a real disk-sync edge over the browser's own
 * WebSocket (key as `?api_key=`), resuming from a position too.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { mdFilter, mdSubject } from '../../contracts/subjects.ts';
import { startCutProxy } from '../support/cut-proxy.ts';
import { type InProcessDisksync, startInProcessDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { publishAtRate } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { storedSeqs } from '../support/stored-seqs.ts';

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

/** What the page's stream has yielded so far (window.__seen). */
type Seen = { seqs: number[]; reconnecting: number; error: string | null };

it.skipIf(!CHROMIUM)(
  'streams and resumes across a cut connection in headless Chromium: every stored BTC sequence after `from` once, in order',
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
    // The page and its stream reach the gateway through a relay whose connections the test cuts.
    const proxy = await startCutProxy(gw.url);
    const from = 10;
    const publisher = publishAtRate(stack.nats.js, ['BTC', 'ETH'], 100);
    try {
      await eventually(
        async () => (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq >= 40,
        20_000,
      );
      browser ??= await chromium.launch({ executablePath: CHROMIUM as string, args: ['--no-sandbox'] });
      const page = await browser.newPage();
      await page.goto(`${proxy.url}/healthz`); // the relay's origin: no CORS in the way
      await page.addScriptTag({ content: bundle.outputFiles[0]?.text as string });
      await page.evaluate(
        ({ apiKey, after }) => {
          const w = globalThis as unknown as {
            mdp: typeof import('../../clients/typescript/src/index.ts');
            __seen: Seen;
            __stream: { close(): void };
          };
          const seen: Seen = { seqs: [], reconnecting: 0, error: null };
          const s = w.mdp.stream({ url: location.origin, key: apiKey, coins: ['BTC'], from: after });
          w.__seen = seen;
          w.__stream = s;
          (async () => {
            try {
              for await (const item of s) {
                if (item.type === 'event') seen.seqs.push(item.seq);
                else if (item.type === 'reconnecting') seen.reconnecting++;
              }
            } catch (err) {
              seen.error = String(err);
            }
          })();
        },
        { apiKey: key, after: from },
      );
      const seen = () => page.evaluate(() => (globalThis as unknown as { __seen: Seen }).__seen);
      await eventually(async () => (await seen()).seqs.length >= 30, 20_000, '30 events before the cut');

      // Cut mid-stream (the publisher goes on): the client reconnects through the relay by itself.
      const atCut = (await seen()).seqs.length;
      const acceptedBefore = proxy.accepted();
      expect(proxy.cut()).toBeGreaterThanOrEqual(1);
      await eventually(
        async () => {
          const s = await seen();
          return s.reconnecting >= 1 && s.seqs.length >= atCut + 30;
        },
        30_000,
        '30 events after the cut',
      );
      expect(proxy.accepted()).toBeGreaterThan(acceptedBefore);

      // The tail: the page reaches the last BTC event stored, then stops.
      await publisher.stop();
      const lastBtc = await stack.nats.jsm.streams.getMessage(STREAMS.MD, {
        last_by_subj: mdSubject('synthetic', 'BTC', 'trade'),
      });
      const last = Number(lastBtc?.seq);
      await eventually(async () => (await seen()).seqs.at(-1) === last, 20_000, 'the last BTC event');
      await page.evaluate(() => (globalThis as unknown as { __stream: { close(): void } }).__stream.close());
      const got = await seen();
      expect(got.error).toBeNull();
      // Every stored BTC sequence after `from`, exactly once, in order: nothing lost across the cut.
      expect(got.seqs).toEqual(
        await storedSeqs(stack.nats, STREAMS.MD, mdFilter({ symbols: ['BTC'] }), from, last),
      );
      expect(got.seqs.length).toBeGreaterThan(atCut + 30);
      await page.close();
    } finally {
      await publisher.stop();
      await proxy.close();
    }
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
