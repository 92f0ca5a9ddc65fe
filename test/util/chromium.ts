// Debian's Chromium driven headless by playwright-core (no browser download), with a fresh profile
// and the network cut off: a report page may load only file:// URLs, so any other request it makes is
// recorded (and aborted) for the test to fail on. Absent browser: `chromiumMissing` says why to skip.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The reason to skip browser tests here, or undefined when Chromium is installed. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (CI installs Debian's chromium; apt-get install chromium)`;
}

export interface OpenedPage {
  readonly page: Page;
  /** Console errors and uncaught page errors, as text. */
  readonly errors: string[];
  /** URLs the page asked for that are not file:// (each was aborted). */
  readonly external: string[];
}

export interface Browser {
  open(path: string, viewport?: { width: number; height: number }): Promise<OpenedPage>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'kvcache-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, offline: true });
  } catch (e) {
    await rm(profile, { recursive: true, force: true });
    throw e;
  }
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  return {
    async open(path, viewport = { width: 1280, height: 900 }) {
      const page = await context.newPage();
      await page.setViewportSize(viewport);
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
      const before = external.length;
      await page.goto(`file://${path}`, { waitUntil: 'load' });
      await page.waitForSelector('body[data-charts-done]');
      return { page, errors, external: external.slice(before) };
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
