/**
 * Measures the "10 million URLs" run in headless Chromium and prints the page's report:
 * `npx tsx demo/measure.ts [urls]` (default 10,000,000). It builds the demo, serves it on
 * 127.0.0.1, clicks the button and waits for the worker's report — the same path a visitor
 * takes, so the figures are the browser's, not Node's. Throughput depends on the machine and
 * its load; bytes per URL do not.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDemo, serveDemo } from './build.js';
import { CHROMIUM_PATH, launchChromium } from './chromium.js';

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 10_000_000);
  if (!Number.isInteger(total) || total < 1) throw new Error(`expected a positive integer count of URLs, received ${process.argv[2]}`);
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}: run bash scripts/install-chromium.sh`);
  const dir = mkdtempSync(join(tmpdir(), 'meguri-demo-measure-'));
  const built = await buildDemo({ outDir: dir });
  const server = await serveDemo(built.outDir);
  const browser = await launchChromium();
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.goto(server.url);
    await page.waitForSelector('html[data-ready="true"]');
    const version = browser.context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent));
    await page.fill('#big-count', String(total));
    await page.click('#big-run');
    await page.waitForSelector('#big-result[data-state="done"], #big-result[data-state="error"]', { timeout: 0 });
    const data = await page.$eval('#big-result', (el) => ({ ...(el as HTMLElement).dataset }));
    const text = await page.$eval('#big-result', (el) => (el as HTMLElement).innerText);
    console.log(`Chromium ${version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(text);
    console.log(JSON.stringify(data));
  } finally {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
