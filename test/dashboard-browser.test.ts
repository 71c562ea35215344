/**
 * `berth dashboard` as an operator uses it: a real daemon (`berth run`), real
 * example plugins, the real page server, and Debian's headless Chromium
 * driven by puppeteer-core. The page must show a registered plugin, show a
 * second one without a reload (over the proxied SSE stream), and the page
 * server must refuse requests without its token and anything but GET.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { test } from 'node:test';
import puppeteer from 'puppeteer-core';
import {
  BERTH_CLI,
  runModule,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

/** What the tests read of a DOM element (the test is compiled without the DOM library). */
type Cell = { textContent: string | null };

const MAIN = BERTH_CLI;
const CHROMIUM = '/usr/bin/chromium';

function get(port: number, path: string, method = 'GET', headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string; headers: Record<string, unknown> }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

test('berth dashboard shows plugins live in headless Chromium', {
  timeout: 180_000,
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed`,
}, async (t) => {
  const dir = createTempDir('bd-');
  const children = new Set<ChildProcess>();
  // biome-ignore lint/suspicious/noExplicitAny: puppeteer's Browser, typed loosely to keep the cleanup simple
  let browser: any;
  t.after(async () => {
    await browser?.close();
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    dir.remove();
  });
  const dataDir = dir.join('data');
  const env = { ...process.env, HOME: dir.path, XDG_STATE_HOME: dir.join('state') };

  const daemon = trackChild(spawnModule(MAIN, ['run', '--data-dir', dataDir], { env }), children);
  await waitForLine(daemon, 'the start-up line', (l) => l.startsWith('berth: watching'));
  const examplePlugin = async (name: string) => {
    const proc = trackChild(
      spawnModule(MAIN, ['example-plugin', '--name', name, '--data-dir', dataDir], { env }),
      children,
    );
    await waitForLine(proc, `${name} registered`, (l) => l.includes('registered with the daemon'));
  };
  await examplePlugin('alpha');

  const dashboard = trackChild(spawnModule(MAIN, ['dashboard', '--data-dir', dataDir], { env }), children);
  const first = await waitForLine(dashboard, 'the dashboard URL', () => true);
  const match = /^berth dashboard: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+))$/.exec(first);
  assert.ok(match, `the first line is the URL: ${first}`);
  const [, url = '', portText = '', token = ''] = match;
  const port = Number(portText);

  // Without the token, or with another method, the page server refuses; the token never reaches the daemon.
  assert.equal((await get(port, '/')).status, 401);
  assert.equal((await get(port, '/v1/plugins')).status, 401);
  assert.equal((await get(port, '/v1/plugins?token=wrong')).status, 401);
  assert.equal((await get(port, `/v1/pods/default/x?token=${token}`, 'DELETE')).status, 405);
  assert.equal((await get(port, `/?token=${token}`, 'GET', { host: 'evil.example:80' })).status, 403);
  const viaProxy = await get(port, `/v1/plugins?token=${token}`);
  assert.equal(viaProxy.status, 200, viaProxy.text);
  assert.ok(JSON.parse(viaProxy.text).plugins.some((p: { name: string }) => p.name === 'alpha'));

  const profile = dir.join('chromium-profile');
  mkdirSync(profile);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 800 });
  const pageErrors: string[] = [];
  page.on('pageerror', (err: Error) => pageErrors.push(err.message));
  page.on('console', (message: { type(): string; text(): string }) => {
    // CSI, DRA and the fleet view answer 404 on this daemon (none configured); the page says so.
    if (message.type() === 'error' && !message.text().includes('status of 404'))
      pageErrors.push(message.text());
  });
  await page.goto(url, { waitUntil: 'domcontentloaded' });

  const pluginNames = async (): Promise<string[]> =>
    page.$$eval('#plugins-body td.plugin-name', (cells: Cell[]) => cells.map((c) => c.textContent ?? ''));
  await waitFor('alpha on the page', async () => (await pluginNames()).includes('alpha'), {
    timeoutMs: 30_000,
  });
  await waitFor(
    'the live indicator',
    async () => (await page.$eval('#live', (e: Cell) => e.textContent)) === 'live',
    {
      timeoutMs: 30_000,
    },
  );
  // The token left the address bar; later requests carry the cookie.
  assert.equal(new URL(page.url()).search, '');
  assert.match(await page.$eval('#overview-body', (e: Cell) => e.textContent ?? ''), /ready/);

  // A second plugin appears without a reload.
  const navigations: string[] = [];
  page.on('framenavigated', () => navigations.push(page.url()));
  await examplePlugin('beta');
  await waitFor('beta on the page without a reload', async () => (await pluginNames()).includes('beta'), {
    timeoutMs: 30_000,
  });
  assert.deepEqual(navigations, [], 'the page did not reload');
  const socketStates = await page.$$eval('#sockets-body td', (cells: Cell[]) =>
    cells.map((c) => c.textContent),
  );
  assert.ok(socketStates.includes('registered'), String(socketStates));

  // BERTH_DASHBOARD_SCREENSHOT=docs/dashboard.png refreshes the README's picture.
  const shots = process.env.BERTH_DASHBOARD_SCREENSHOT ?? dir.join('dashboard.png');
  await page.screenshot({ path: shots });
  assert.ok(statSync(shots).size > 10_000, 'the screenshot has content');
  assert.deepEqual(pageErrors, [], 'no script errors or refused requests on the page');

  // Keyboard: the skip link is the first tab stop and moves focus to the content.
  await page.keyboard.press('Tab');
  assert.equal(
    await page.evaluate('document.activeElement && document.activeElement.textContent'),
    'Skip to content',
  );
  await page.keyboard.press('Enter');
  await waitFor(
    'focus on main',
    async () => (await page.evaluate('document.activeElement && document.activeElement.id')) === 'main',
  );

  // Narrow (phone) width: nothing is wider than the screen except inside the scrolling table boxes.
  await page.setViewport({ width: 390, height: 800 });
  const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px on a phone`);
});

test('berth dashboard on a port in use: one line, exit 1', { timeout: 60_000 }, async (t) => {
  const dir = createTempDir('bd-');
  const children = new Set<ChildProcess>();
  t.after(async () => {
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    dir.remove();
  });
  const env = { ...process.env, HOME: dir.path, XDG_STATE_HOME: dir.join('state') };
  const first = trackChild(spawnModule(MAIN, ['dashboard', '--data-dir', dir.path], { env }), children);
  const line = await waitForLine(first, 'the dashboard URL', () => true);
  const port = /:(\d+)\//.exec(line)?.[1];
  assert.ok(port, line);
  const { code, stderr } = await runModule(MAIN, ['dashboard', '--data-dir', dir.path, '--port', port], {
    env,
  });
  assert.equal(code, 1);
  assert.equal(
    stderr,
    `berth: dashboard port 127.0.0.1:${port} is in use; pick another with --port, or leave it out for a free one\n`,
  );
});
