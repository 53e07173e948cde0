/**
 * The web console in headless Chromium (playwright-core driving Debian's `chromium`), against real
 * processes: a unified gateway, the `{base_url}` gateway (console, dashboard proxy) and the
 * simulator on one nats-server. One visitor's journey, each step asserting what the page shows:
 * register from a URL with utm_* parameters → log in → create a key (shown once) → use it → the
 * list shows its last use → narrow its scopes → the unified stream refuses it within 1 s → revoke
 * → refused (the second counted from the click). The live chart draws points (the page's own point
 * counter, `data-points` on the chart, grows; screenshots are kept to look at), keeps drawing after
 * the proxy's process is cut and restarted (EventSource resumes with Last-Event-ID), and a logout
 * elsewhere ends its stream: watched for two seconds and for 40 BTC events the simulator published
 * meanwhile (a NATS subscription beside the page), the page receives none of them. The candles
 * view: trades of a coin the simulator leaves alone (SOL, on a source of its own so the test sets
 * its event time) close bars in the derived producer; the page holds those bars (history from an
 * hour back, then live) plus the forming candle built from trades, with the stored bars' OHLC, and
 * a forming candle is replaced by its bar when that closes.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BarEvent } from '../../contracts/derived.ts';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import type { TradeEvent } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { derivedSubject, mdFilter, mdSubject } from '../../contracts/subjects.ts';
import { freePort } from '../../platform/free-port.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { type ServiceProcess, startService } from '../support/process.ts';

const CHROMIUM = '/usr/bin/chromium';
const SECRET = 'console-browser-test-secret-0123456789';
const SHOTS = join(process.cwd(), '.data', 'console-screenshots');

let nats: TestNats;
let browser: Browser;
const procs: ServiceProcess[] = [];
let base = '';
let unifiedUrl = '';
let httpEnv: Record<string, string> = {};

async function startHttp(): Promise<ServiceProcess> {
  const p = startService(['gateway', 'http'], httpEnv);
  procs.push(p);
  await p.waitForLog((l) => l.msg === 'http (console) listening', 90_000);
  return p;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(SHOTS, { recursive: true });
  nats = await startTestNats();
  const common = { NATS_URL: nats.url, NODE_ENV: 'test', API_KEY_SECRET: SECRET };
  const unifiedPort = await freePort();
  const unified = startService(['gateway', 'unified', '--region', 'us'], {
    ...common,
    UNIFIED_PORT_US: String(unifiedPort),
  });
  procs.push(unified);
  const listening = await unified.waitForLog((l) => l.msg === 'unified stream listening', 90_000);
  unifiedUrl = new URL(listening.url as string).origin;
  // SOL is left to the candles test's own trades.
  const sim = startService(['producer', 'sim'], { ...common, SIM_TRADE_RATE: '20', COINS: 'BTC,ETH' });
  procs.push(sim);
  const derived = startService(['producer', 'derived'], common);
  procs.push(derived);
  await derived.waitForLog((l) => l.msg === 'derived producer reading MD', 90_000);
  const httpPort = await freePort();
  httpEnv = {
    ...common,
    HTTP_PORT: String(httpPort),
    UNIFIED_UPSTREAM_URL: unifiedUrl,
    SELF_SERVICE_PLANS: 'true',
  };
  await startHttp();
  base = `http://127.0.0.1:${httpPort}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await nats?.cleanup();
});

const text = (page: Page, selector: string) => page.locator(selector).innerText();
const streamStatus = async (key: string) => {
  const ctl = new AbortController();
  const res = await fetch(`${unifiedUrl}/api/v1/unified/stream?coin=BTC`, {
    headers: { 'x-api-key': key },
    signal: ctl.signal,
  });
  ctl.abort();
  return res.status;
};

it('registers, manages keys, and narrows and revokes them with effect within a second', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const email = `viewer-${Date.now()}@example.com`;
  const password = 'C0rrect-Horse-Battery';

  await page.goto(`${base}/console/register?utm_source=newsletter&utm_medium=email&utm_campaign=launch`);
  await expect(page.getByRole('heading', { name: 'Create an account' }).isVisible()).resolves.toBe(true);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Plan').selectOption('pro');
  await page.screenshot({ path: join(SHOTS, '1-register.png') });
  await page.getByRole('button', { name: 'Create account' }).click();

  await page.waitForURL(/\/console\?registered=1/);
  expect(await text(page, '#notice')).toContain('Account created');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/console\/keys$/);
  await page.waitForSelector('body[data-ready="true"]');
  expect(await text(page, '[data-testid="who"]')).toBe(email);
  expect(await page.locator('#no-keys').isVisible()).toBe(true);

  // The session is an HttpOnly cookie: the page's script cannot read it.
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'mdp_session');
  expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  expect(await page.evaluate(() => document.cookie)).not.toContain('mdp_session');

  // Attribution from the URL was recorded at registration.
  await page.getByRole('link', { name: 'Account' }).click();
  await page.waitForSelector('body[data-ready="true"]');
  expect(await text(page, '[data-testid="plan"]')).toBe('pro');
  const attribution = await text(page, '[data-testid="registration-attribution"]');
  expect(attribution).toContain('utm_source=newsletter');
  expect(attribution).toContain('utm_campaign=launch');
  expect(attribution).toContain('source=web');
  await page.screenshot({ path: join(SHOTS, '2-account.png'), fullPage: true });

  // Create a key: shown once, with a warning.
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.waitForSelector('body[data-ready="true"]');
  await page.getByLabel('Key name').fill('trading bot');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#created').waitFor({ state: 'visible' });
  const key = await page.locator('[data-testid="new-key"]').innerText();
  expect(key).toMatch(/^mdp_/);
  expect(await text(page, '#created')).toContain('shown only once');
  const row = page.locator('#keys tr', { hasText: 'trading bot' });
  expect(await row.locator('[data-col="status"]').innerText()).toBe('active');
  expect(await row.locator('[data-col="last-used"]').innerText()).toBe('never');
  await page.screenshot({ path: join(SHOTS, '3-key-created.png'), fullPage: true });
  await page.getByRole('button', { name: 'I have stored it' }).click();
  expect(await page.locator('[data-testid="new-key"]').innerText()).toBe('');

  // Use it; the list shows its last use.
  expect(await streamStatus(key)).toBe(200);
  await eventually(
    async () => {
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      return (await row.locator('[data-col="last-used"]').innerText()) !== 'never';
    },
    10_000,
    'the key list shows a last use',
  );

  // Narrow its scopes to `generate`: the unified stream refuses it within 1 s of the click (the
  // page's request and confirmation are inside that second).
  await row.getByRole('button', { name: 'Edit trading bot' }).click();
  await page.getByRole('dialog').getByLabel('generate').check();
  await page.screenshot({ path: join(SHOTS, '4-edit.png') });
  const narrowedAt = Date.now();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForSelector('#notice.success');
  expect(await text(page, '#notice')).toContain('updated');
  expect(await row.locator('[data-col="scopes"]').innerText()).toBe('generate');
  await eventually(async () => (await streamStatus(key)) === 403, 1_000, 'the narrowed key refused');
  const refusedMs = Date.now() - narrowedAt;
  console.log(`narrowed key refused ${refusedMs} ms after the click`);
  expect(refusedMs).toBeLessThan(1_000);

  // Revoke with a confirmation: refused.
  await row.getByRole('button', { name: 'Revoke trading bot' }).click();
  expect(await text(page, '#revoke-dialog')).toContain('cannot be undone');
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.waitForSelector('#keys tr[data-status="revoked"]');
  expect(await row.locator('[data-col="status"]').innerText()).toBe('revoked');
  await page.screenshot({ path: join(SHOTS, '5-revoked.png'), fullPage: true });
  await eventually(async () => (await streamStatus(key)) === 401, 1_000, 'the revoked key refused');
  await context.close();
}, 120_000);

/** A new Pro account registered through the console API. */
async function registerPro(prefix: string): Promise<{ email: string; password: string }> {
  const email = `${prefix}-${Date.now()}@example.com`;
  const password = 'C0rrect-Horse-Battery';
  const reg = await fetch(`${base}/api/v1/console/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, plan: 'pro' }),
  });
  expect(reg.status).toBe(201);
  return { email, password };
}

/** Logs in on the console's page and waits for the key list it lands on. */
async function logIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/console\/keys$/);
}

it('draws the live chart, resumes after the proxy is cut, and stops when the session ends', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const { email, password } = await registerPro('chart');
  await logIn(page, email, password);

  await page.getByRole('link', { name: 'Live market' }).click();
  await page.waitForSelector('body[data-ready="true"]');
  // The page's own count of the points the chart holds (its series' data), shown under it too.
  const points = async () => Number(await page.locator('#chart').getAttribute('data-points'));
  await eventually(async () => (await points()) >= 10, 20_000, 'ten points drawn');
  expect(await text(page, '#feed-text')).toBe('Live');
  const shown = Number((await text(page, '#feed-detail')).match(/(\d+) points/)?.[1]);
  expect(shown).toBeGreaterThanOrEqual(10);
  // Screenshots to look at (not judged by their pixels).
  await page.locator('#chart').screenshot({ path: join(SHOTS, '6-chart.png') });
  await page.screenshot({ path: join(SHOTS, '6-market.png') });

  // Cut the proxy: its process dies, a new one starts on the same port; the chart goes on.
  const proxy = procs.find((p) => p.child.spawnargs.includes('http')) as ServiceProcess;
  proxy.child.kill('SIGKILL');
  await proxy.exited;
  procs.splice(procs.indexOf(proxy), 1);
  const before = await points();
  await startHttp();
  await eventually(async () => (await points()) > before + 5, 30_000, 'points drawn after the cut');
  expect(await text(page, '#feed-text')).toBe('Live');

  // Log out in another tab of the same browser: this chart's stream ends, and says so.
  const other = await context.newPage();
  await other.goto(`${base}/console/account`);
  await other.getByRole('button', { name: 'Log out' }).click();
  await other.waitForURL(/logged_out=1/);
  expect(await text(other, '#notice')).toContain('logged out');
  await eventually(
    async () => (await page.locator('#feed-status').getAttribute('data-state')) === 'ended',
    10_000,
    'the chart stream ended',
  );
  expect(await text(page, '#feed-text')).toMatch(/Stream ended/);
  const stopped = await points();
  await page.screenshot({ path: join(SHOTS, '7-ended.png') });
  // Nothing more arrives while the feed goes on: for two seconds, and until the simulator has
  // published 40 more BTC events (the chart's coin; a subscription beside the page counts them),
  // the last event id the page saw and its point count do not move.
  const lastId = await text(page, '#feed-detail');
  const control = await connectNats(nats.url, 'console-browser-control', createLogger('silent'));
  try {
    let published = 0;
    const sub = control.nc.subscribe(mdFilter({ symbols: ['BTC'] }), {
      callback: () => {
        published++;
      },
    });
    const watchedFrom = Date.now();
    await eventually(
      () => published >= 40 && Date.now() - watchedFrom >= 2_000,
      20_000,
      '40 BTC events published and two seconds after the stream ended',
    );
    sub.unsubscribe();
    expect(await text(page, '#feed-detail')).toBe(lastId);
    expect(await points()).toBe(stopped);
    expect(await page.locator('#feed-status').getAttribute('data-state')).toBe('ended');
  } finally {
    await control.nc.close();
  }
  await context.close();
}, 180_000);

it('shows 1-minute candles: closed bars from an hour back, then the forming one, replaced when its bar closes', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const { email, password } = await registerPro('candles');
  const control = await connectNats(nats.url, 'console-browser-candles', createLogger('silent'));
  // binance SOL: nothing else publishes it here, so its event time (the bars' clock) is the test's.
  let n = 0;
  const publish = async (timestampMs: number, price: number) => {
    const i = n++;
    const size = 0.5 + (i % 3);
    const trade: TradeEvent = {
      event_type: 'trade',
      source: 'binance',
      symbol: 'SOL',
      timestamp_ms: timestampMs,
      capture_time_ms: timestampMs,
      side: i % 2 ? 'buy' : 'sell',
      price,
      size,
      trade_id: `candles_${i}`,
      notional_usd: price * size,
    };
    await control.js.publish(mdSubject('binance', 'SOL', 'trade'), encodeStoredEvent(trade));
  };
  const storedBar = async (startMs: number) => {
    const m = await control.jsm.streams.getMessage(STREAMS.DERIVED, {
      last_by_subj: derivedSubject('binance', 'SOL', 'bar_1m'),
    });
    const bar = m?.json<BarEvent>();
    expect(bar?.start_ms).toBe(startMs);
    return { time: startMs / 1_000, open: bar?.open, high: bar?.high, low: bar?.low, close: bar?.close };
  };
  try {
    // Three minutes of trades before the page opens: the first two close (event time past their
    // end + 2 s), the third stays open. The second minute is a down candle.
    const M = Math.floor(Date.now() / 60_000) * 60_000; // the forming minute
    const B = M - 3 * 60_000;
    for (let k = 0; k < 3; k++)
      for (const [offset, delta] of [
        [1_000, 0],
        [15_000, 0.8],
        [30_000, -0.6],
        [50_000, 0.3],
      ] as const)
        await publish(B + k * 60_000 + offset, 150 + k + (k === 1 ? -delta : delta)); // the second falls

    await logIn(page, email, password);
    await page.getByRole('link', { name: 'Live market' }).click();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.getByLabel('View').inputValue()).toBe('line'); // the default stays
    await page.getByLabel('Coin').selectOption('SOL');
    await page.getByLabel('View').selectOption('candles');
    expect(new URL(page.url()).hash).toBe('#candles');
    expect(await page.locator('[data-legend="candles"]').isVisible()).toBe(true);
    expect(await page.locator('[data-legend="line"]').isVisible()).toBe(false);

    const chart = page.locator('#chart');
    const candles = async () => Number(await chart.getAttribute('data-candles'));
    const held = async (attr: string) => JSON.parse((await chart.getAttribute(attr)) ?? 'null');
    await eventually(async () => (await candles()) === 2, 30_000, 'the two closed bars from the history');
    expect(await held('data-last-bar')).toEqual(await storedBar(B + 60_000));
    // Both streams open (bars and trades) before the forming minute's trades go out.
    await eventually(
      async () => (await page.locator('#feed-status').getAttribute('data-state')) === 'live',
      20_000,
      'both streams live',
    );

    // The forming minute: its first trade closes the third bar.
    const forming = [150.4, 151.1, 149.9, 150.6];
    for (const [i, price] of forming.entries()) await publish(M + 3_000 + i * 2_000, price);
    const formed = { time: M / 1_000, open: 150.4, high: 151.1, low: 149.9, close: 150.6 };
    await eventually(
      async () =>
        (await candles()) === 4 &&
        (await held('data-last-bar'))?.time === (B + 2 * 60_000) / 1_000 &&
        (await held('data-last-candle'))?.close === formed.close,
      30_000,
      'three closed bars and the forming one, all its trades in',
    );
    expect(await held('data-last-bar')).toEqual(await storedBar(B + 2 * 60_000));
    expect(await held('data-last-candle')).toEqual(formed);
    expect(await text(page, '#feed-detail')).toContain(
      'SOL (binance) · 1-minute candles: 3 closed, 1 forming',
    );
    expect(await text(page, '#feed-text')).toBe('Live');
    await chart.screenshot({ path: join(SHOTS, '8-candles.png') });
    await page.screenshot({ path: join(SHOTS, '8-market-candles.png') });

    // The next minute's first trade closes the forming one: its bar replaces it, one more forms.
    await publish(M + 63_000, 150.9);
    await eventually(
      async () => (await held('data-last-bar'))?.time === M / 1_000 && (await candles()) === 5,
      30_000,
      'the forming candle replaced by its bar, and the next minute forming',
    );
    const bar = await storedBar(M);
    expect(bar).toEqual(formed); // what the page built from trades was the bar to come
    expect(await held('data-last-bar')).toEqual(bar);
    expect(await held('data-last-candle')).toEqual({
      time: M / 1_000 + 60,
      open: 150.9,
      high: 150.9,
      low: 150.9,
      close: 150.9,
    });
    expect(await text(page, '#feed-detail')).toContain('4 closed, 1 forming');

    // A reload keeps the view (the hash), and a logout elsewhere ends it as in the line view.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.getByLabel('View').inputValue()).toBe('candles');
    const other = await context.newPage();
    await other.goto(`${base}/console/account`);
    await other.getByRole('button', { name: 'Log out' }).click();
    await other.waitForURL(/logged_out=1/);
    await eventually(
      async () => (await page.locator('#feed-status').getAttribute('data-state')) === 'ended',
      10_000,
      'the candle streams ended',
    );
    expect(await text(page, '#feed-text')).toMatch(/Stream ended/);
  } finally {
    await control.nc.close();
  }
  await context.close();
}, 180_000);
