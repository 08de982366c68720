// `npm run bench -- panel [--rounds N]`: cold loads of the client panel in headless Chromium on
// loopback (issue 33): the sign-in page signed out, and the dashboard signed in. For each route:
// the JS and CSS it loads, gzipped (the sizes the server's gzip answers carry), against the
// budgets (sign-in ≤ 150 KB of JS, dashboard ≤ 250 KB); the time to its first meaningful content
// (its <h1> on screen, from navigation start); and the long tasks (> 50 ms) on the main thread.
// The baseline, measured in the same run with the same browser: a page of plain HTML with one <h1>
// from bench/raw-server.ts. Every load is cold (a new browser context: empty cache). Medians.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { type BenchOptions, ROOT, startHostplane, startRaw } from './support.ts';

export const engine = 'pglite' as const;

const BUDGET_KB = { login: 150, dashboard: 250 };
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface Load {
  contentMs: number;
  longTasks: number;
  longTaskMs: number;
  jsGzip: number;
  cssGzip: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

/** Counts long tasks from the very start of the page (an init script runs before the page's own). */
const OBSERVE_LONG_TASKS = `
  window.__longTasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
    .observe({ type: 'longtask', buffered: true });
`;

async function gzipBytes(url: string): Promise<number> {
  const res = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
  const body = await res.arrayBuffer();
  // fetch undoes the encoding; the header says what went over the wire.
  return Number(res.headers.get('content-length') ?? body.byteLength);
}

async function coldLoad(browser: Browser, url: string, signIn?: (page: Page) => Promise<void>): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    const page = await context.newPage();
    if (signIn) {
      await signIn(page);
      // Signed in, but the load itself is measured cold: a new page with the cache cleared.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.clearBrowserCache');
    }
    await page.addInitScript(OBSERVE_LONG_TASKS);
    const assets: string[] = [];
    page.on('response', (response) => {
      const type = response.request().resourceType();
      if (type === 'script' || type === 'stylesheet') assets.push(response.url());
    });
    await page.goto(url, { waitUntil: 'commit' });
    await page.locator('h1').first().waitFor();
    const contentMs = await page.evaluate(() => performance.now());
    await page.waitForLoadState('networkidle');
    const long = ((await page.evaluate('window.__longTasks')) as number[] | undefined) ?? [];
    let jsGzip = 0;
    let cssGzip = 0;
    for (const asset of new Set(assets)) {
      const bytes = await gzipBytes(asset);
      if (asset.endsWith('.css')) cssGzip += bytes;
      else jsGzip += bytes;
    }
    return { contentMs, longTasks: long.length, longTaskMs: long.reduce((a, b) => a + b, 0), jsGzip, cssGzip };
  } finally {
    await context.close();
  }
}

export async function run(options: BenchOptions): Promise<string> {
  const rounds = Math.max(options.rounds, 5);
  const server = await startHostplane(options);
  const raw = await startRaw({
    '/': {
      status: 200,
      type: 'text/html; charset=utf-8',
      body: '<!doctype html><html lang="en"><title>Baseline</title><h1>Sign in</h1></html>',
    },
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
  try {
    // A verified account to sign in with (the staff CLI marks it verified).
    const email = `bench${Date.now()}@example.in`;
    const password = 'Bench-pass-123';
    const csrf = await fetch(`${server.url}/api/v1/client/auth/csrf/`);
    const cookie = (csrf.headers.get('set-cookie') ?? '').split(';', 1)[0] ?? '';
    const token = ((await csrf.json()) as { csrf_token: string }).csrf_token;
    const registered = await fetch(`${server.url}/api/v1/client/auth/register/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': token },
      body: JSON.stringify({ name: 'Bench', email, username: `bench${Date.now()}`, password }),
    });
    if (registered.status !== 201 && registered.status !== 200) throw new Error(`register: ${registered.status}`);
    const verified = spawnSync(
      process.execPath,
      [join(ROOT, 'server/src/admin/main.ts'), 'accounts', 'verify', email],
      { cwd: ROOT, env: { ...process.env, ...server.env }, encoding: 'utf8' },
    );
    if (verified.status !== 0) throw new Error(`accounts verify: ${verified.stderr}`);
    const signIn = async (page: Page) => {
      await page.goto(`${server.url}/login`);
      await page.getByLabel('Email or username', { exact: true }).fill(email);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${server.url}/`);
    };

    const samples: Record<'baseline' | 'login' | 'dashboard', Load[]> = { baseline: [], login: [], dashboard: [] };
    for (let round = 0; round < rounds; round++) {
      samples.baseline.push(await coldLoad(browser, `${raw.url}/`));
      samples.login.push(await coldLoad(browser, `${server.url}/login`));
      samples.dashboard.push(await coldLoad(browser, `${server.url}/`, signIn));
    }
    const base = median(samples.baseline.map((s) => s.contentMs));
    const rows = (['baseline', 'login', 'dashboard'] as const).map((name) => {
      const s = samples[name];
      const content = median(s.map((x) => x.contentMs));
      const js = median(s.map((x) => x.jsGzip)) / 1024;
      const css = median(s.map((x) => x.cssGzip)) / 1024;
      const budget = name === 'baseline' ? null : BUDGET_KB[name];
      return `| ${name === 'baseline' ? 'baseline (plain HTML)' : name === 'login' ? '/login (signed out)' : '/ dashboard (signed in)'} | ${content.toFixed(0)} | ${(content / base).toFixed(2)} | ${js.toFixed(1)} | ${budget === null ? '—' : `${budget} ${js <= budget ? 'met' : '**over**'}`} | ${css.toFixed(1)} | ${median(s.map((x) => x.longTasks))} (${median(s.map((x) => x.longTaskMs)).toFixed(0)} ms) |`;
    });
    return [
      '| route | first content (ms, median) | × baseline | JS gzip (KB) | JS budget (KB) | CSS gzip (KB) | long tasks (total) |',
      '|---|---:|---:|---:|---|---:|---|',
      ...rows,
      '',
      `${rounds} cold loads per route, interleaved, in ${CHROMIUM} headless at 1280 × 860.`,
    ].join('\n');
  } finally {
    await browser.close();
    await raw.stop();
    await server.stop();
  }
}
