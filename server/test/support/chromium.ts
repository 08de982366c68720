// Real headless Chromium for the panel's journeys: playwright-core driving Debian's `chromium`
// package (no browser download; `.ci/run` installs the package when it is missing). A test gets a
// page bound to one viewport and theme, with what the page did wrong collected: console errors,
// Content-Security-Policy violations, uncaught exceptions. `audit` runs axe-core on the page
// (serious and critical violations fail) and saves a screenshot under test-results/panel/.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ROOT } from './template.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here (no Chromium), or null. In CI a missing browser fails instead. */
export function chromiumMissing(): string | null {
  if (existsSync(CHROMIUM)) return null;
  const reason = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI) throw new Error(reason);
  return reason;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // The machine's network is closed: without these, Chromium keeps trying Google's hosts.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Viewport {
  name: string;
  width: number;
  height: number;
}

export const PHONE: Viewport = { name: 'phone', width: 390, height: 844 };
export const DESKTOP: Viewport = { name: 'desktop', width: 1280, height: 860 };

export interface PanelPage {
  context: BrowserContext;
  page: Page;
  viewport: Viewport;
  /** Console errors, CSP violations and uncaught exceptions, as they happened. */
  problems: string[];
  /** Fails when the page logged anything wrong, except what `allowed` matches (expected 4xx answers). */
  assertClean(allowed?: RegExp[]): void;
}

/** A console line the browser prints for every refused request (the page shows the refusal itself). */
const REFUSED_REQUEST = /Failed to load resource: the server responded with a status of 4\d\d/;

export async function openPanel(
  browser: Browser,
  baseUrl: string,
  viewport: Viewport,
  colorScheme: 'light' | 'dark' = 'light',
): Promise<PanelPage> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: { width: viewport.width, height: viewport.height },
    colorScheme,
    timezoneId: 'Asia/Kolkata',
    locale: 'en-IN',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() === 'error' && !REFUSED_REQUEST.test(text)) problems.push(`console: ${text}`);
    else if (/Content Security Policy/i.test(text)) problems.push(`csp: ${text}`);
  });
  page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
  return {
    context,
    page,
    viewport,
    problems,
    assertClean(allowed = []) {
      const left = problems.filter((p) => !allowed.some((a) => a.test(p)));
      assert.deepEqual(left, [], `the page reported problems:\n${left.join('\n')}`);
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const SCREENSHOTS = join(ROOT, 'test-results', 'panel');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core on what the page shows now, in the light and in the dark theme (serious and critical
 * violations fail the test, with where they are), and a full-page screenshot of each,
 * `<viewport>-<theme>-<name>.png`, for people to look at. The page keeps the theme it had.
 */
export async function audit(panel: PanelPage, name: string): Promise<void> {
  const { page } = panel;
  // A page is there when its heading is (lazy chunks and the first queries have come back).
  await page.locator('h1').first().waitFor();
  await page.waitForLoadState('networkidle');
  // A function, not a string: a string would be evaluated with eval, which the panel's CSP refuses.
  await page.waitForFunction(
    () =>
      (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(
        '.loading',
      ) === null,
  );
  // Evaluated through DevTools, so the page's CSP (no inline script) does not apply to the checker.
  // Once per document: the panel moves between its pages without loading a new one.
  if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(AXE_SOURCE);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const own = (await page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'")) as
    | 'light'
    | 'dark';
  const found: string[] = [];
  try {
    const schemes = own === 'light' ? (['light', 'dark'] as const) : (['dark', 'light'] as const);
    for (const scheme of schemes) {
      await page.emulateMedia({ colorScheme: scheme });
      // axe-core in both themes at desktop width; on a phone in the page's own theme only (what a
      // theme changes, colours and contrast, is the same at every width; what a width changes, the
      // layout and the menus, is checked in one theme), which halves the phone's cost in CI.
      if (panel.viewport.name === 'phone' && scheme !== own) {
        await page.screenshot({
          path: join(SCREENSHOTS, `${panel.viewport.name}-${scheme}-${name}.png`),
          fullPage: true,
        });
        continue;
      }
      // (Strings, not functions: this file is compiled for Node, without the DOM's types.)
      const violations = (await page.evaluate(
        "axe.run({ resultTypes: ['violations'] }).then((r) => r.violations)",
      )) as AxeViolation[];
      for (const v of violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
        found.push(`${scheme}: ${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      }
      await page.screenshot({
        path: join(SCREENSHOTS, `${panel.viewport.name}-${scheme}-${name}.png`),
        fullPage: true,
      });
    }
  } finally {
    await page.emulateMedia({ colorScheme: own });
  }
  assert.deepEqual(found, [], `axe-core on ${name} (${panel.viewport.name})`);
}
