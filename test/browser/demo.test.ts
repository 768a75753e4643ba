/**
 * The browser demo in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core; scripts/install-chromium.sh installs it and .ci/run calls that script).
 *
 * The test builds the demo into a temporary folder, serves it on 127.0.0.1 itself, and drives
 * the page as a user would: paste a list with known duplicates, compare two texts, cluster
 * documents, run a 100k-URL batch in the Web Worker. The keys and simhashes the page shows
 * are checked against the same computations in Node (golden vectors across the two
 * runtimes), a screenshot goes to test-output/, and the last test stops the server and
 * reloads to show the service worker serves the page offline.
 *
 * Without Chromium the test fails with instructions; MEGURI_SKIP_BROWSER=1 skips it, loudly.
 * MEGURI_CHROMIUM overrides the executable's path (default /usr/bin/chromium); the launch
 * flags are in demo/chromium.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltDemo, type DemoServer, buildDemo, serveDemo } from '../../demo/build.js';
import { CHROMIUM_PATH, type LaunchedChromium, launchChromium } from '../../demo/chromium.js';
import { SyntheticUrls } from '../../demo/src/synth.js';
import { canonicalize, keyToHex, simhashText, urlKey } from '../../src/index.js';

const OUTPUT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../test-output');
const SKIP = process.env['MEGURI_SKIP_BROWSER'] === '1';
// CI never skips the browser test: an opt-out there would hide a missing install step.
if (SKIP && process.env['CI'] === 'true') {
  throw new Error('MEGURI_SKIP_BROWSER=1 is refused in CI (CI=true): install Chromium with scripts/install-chromium.sh and unset it');
}

if (SKIP) {
  console.warn(
    '\n' +
      '*******************************************************************\n' +
      '*  MEGURI_SKIP_BROWSER=1: the browser test of the demo is SKIPPED. *\n' +
      '*  Unset it (and run scripts/install-chromium.sh) to run it.      *\n' +
      '*******************************************************************\n',
  );
}

/** A list with known duplicates: 14 non-blank lines, 4 rejected, 5 distinct pages, 3 duplicate groups. */
const PASTED = [
  'https://Example.com/a?b=2&a=1',
  'https://example.com:443/a?a=1&b=2#top',
  'https://example.com/a?utm_source=mail&a=1&b=2',
  'http://example.com/docs/../b',
  'ftp://example.com/file.txt',
  '',
  'http://EXAMPLE.com./b',
  'https://example.org/%7Euser/',
  'not a url at all',
  'https://example.org/~user/?',
  'https://example.org/unique-page',
  'https://[::1/broken',
  'https://example.net/search?q=crawl&fbclid=IwAR0x',
  '   ',
  'http://a..b/',
  'https://example.org/~user/#bio',
].join('\n');

const BAKERY =
  'Harbor Lights Bakery opens at seven every morning. Fresh sourdough, rye and seeded loaves come out of ' +
  'the oven before eight, and the almond croissants sell out by ten. Our bakers mill the flour on site ' +
  'from grain grown two valleys over, and the starter is older than the shop itself. Visit us on Quay ' +
  'Street, next to the ferry terminal.';
/** A visitor counter moved: Hamming distance 1, a cosmetic change. */
const TEXT_A = `${BAKERY} Visitors today: 1204.`;
const TEXT_B = `${BAKERY} Visitors today: 1377.`;
const TEXT_C =
  'The harbor ferry timetable changes on the first of June. Boats leave every forty minutes ' +
  'on weekdays and every hour at weekends; the last crossing is at eleven at night.';

/**
 * Golden inputs for the cross-runtime check: the spellings where URL parsers are most likely
 * to disagree (IDNA, IPv4 and IPv6 literals, escapes, backslashes, odd ports, session ids).
 */
const TRICKY = [
  'HTTP://EXAMPLE.COM:80/%7Ea/./b/../c?b=2&a=1#x',
  'https://bücher.example/straße?q=ü',
  'https://xn--bcher-kva.example/',
  'https://[2001:DB8::1]:443/x',
  'http://0x7f.1/',
  'http://192.168.0.1./',
  'https://example.com/a%2Fb%3F?x=%2f',
  'https://example.com/a b?c d',
  'https://example.com/été',
  'https://user:pass@example.com/',
  'https://example.com/path;param?x',
  'https://example.com/?jsessionid=0123456789ABCDEF0123&x=1',
  'https://example.com/?sid=abc',
  'http://example.com\\foo\\bar',
  'https://example.com/%zz',
  'https://example.com:8080/',
  'http://example.com:0080/',
  'https://ex%41mple.com/',
  'https://example.com/a?b=1&&c=2&',
  'https://☃.example/',
  'https://example.com/%E2%82%AC',
  'https://a.b.c.d.example.co.uk/x',
  'https://example.com/a/%2e%2E/b',
  'http://example.com/?a=%41&b=%3D',
].join('\n');

describe.skipIf(SKIP)('the demo in headless Chromium', () => {
  let built: BuiltDemo | undefined;
  let server: DemoServer | undefined;
  let browser: LaunchedChromium | undefined;
  let page: Page;
  let buildDir: string | undefined;
  const pageErrors: string[] = [];
  let wasmContentType = '';

  beforeAll(async () => {
    if (!existsSync(CHROMIUM_PATH)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM_PATH}: the demo's browser test needs it. ` +
          'Install it with `bash scripts/install-chromium.sh` (Debian\'s chromium via apt-get), ' +
          'or set MEGURI_SKIP_BROWSER=1 to skip this test on purpose.',
      );
    }
    buildDir = mkdtempSync(join(tmpdir(), 'meguri-demo-build-'));
    built = await buildDemo({ outDir: buildDir });
    server = await serveDemo(built.outDir);
    browser = await launchChromium();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(msg.text());
    });
    page.on('response', (res) => {
      if (res.url().endsWith('/meguri_core.wasm')) wasmContentType = res.headers()['content-type'] ?? '';
    });
    await page.goto(server.url);
    await page.waitForSelector('html[data-ready="true"]', { timeout: 20_000 });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (buildDir !== undefined) rmSync(buildDir, { recursive: true, force: true });
  });

  it('loads the wasm core through the browser entry, served as application/wasm', async () => {
    expect(await page.getAttribute('#core-status', 'data-state')).toBe('ready');
    expect(wasmContentType).toBe('application/wasm');
    expect(built!.files).toEqual(expect.arrayContaining(['app.js', 'worker.js', 'sw.js', 'meguri_core.wasm', 'index.html', 'style.css']));
    expect(pageErrors).toEqual([]);
  });

  it('dedups a pasted list: unique count, groups under their canonical form with the merging rules, rejected lines', async () => {
    await page.fill('#url-input', PASTED);
    await page.click('#url-run');
    await page.waitForSelector('#url-results[data-state="done"]');
    const data = await page.$eval('#url-results', (el) => ({ ...(el as HTMLElement).dataset }));
    expect(data).toMatchObject({ lines: '14', unique: '5', duplicates: '5', groups: '3', rejected: '4' });

    const groups = await page.$$eval('#url-groups > li', (lis) =>
      lis.map((li) => ({
        canonical: li.getAttribute('data-canonical'),
        size: li.getAttribute('data-size'),
        text: li.textContent ?? '',
      })),
    );
    expect(groups.map((g) => [g.canonical, g.size])).toEqual([
      ['https://example.com/a?a=1&b=2', '3'],
      ['http://example.com/b', '2'],
      ['https://example.org/~user/', '3'],
    ]);
    expect(groups[0]!.text).toContain('host lowercased');
    expect(groups[0]!.text).toContain('default port dropped');
    expect(groups[0]!.text).toContain('query sorted');
    expect(groups[0]!.text).toContain('tracking parameter removed: utm_source');
    expect(groups[0]!.text).toContain('fragment removed');
    expect(groups[1]!.text).toContain('dot segments removed');
    expect(groups[1]!.text).toContain('trailing dot removed from host');
    expect(groups[2]!.text).toContain('percent-encoding normalized');
    expect(groups[2]!.text).toContain('empty query dropped');

    const rejected = await page.$$eval('#url-rejected > li', (lis) => lis.map((li) => [li.getAttribute('data-line'), li.getAttribute('data-reason')]));
    expect(rejected).toEqual([
      ['5', 'scheme ftp is not http or https'],
      ['9', 'not an absolute URL (no scheme)'],
      ['12', 'not a parseable URL'],
      ['15', 'invalid host "a..b"'],
    ]);
  });

  it('shows the same URLKeys as Node computes (golden vectors across runtimes)', async () => {
    const rows = await page.$$eval('#url-keys tbody tr', (trs) => trs.map((tr) => [tr.querySelector('td code')?.textContent ?? '', tr.getAttribute('data-key') ?? '']));
    expect(rows.length).toBe(5);
    for (const [canonical, key] of rows) {
      expect(keyToHex(urlKey(canonical!).key)).toBe(key);
    }
    // And every pasted line canonicalizes in Node to one of the page's canonical forms.
    const pageForms = new Set(rows.map((r) => r[0]));
    for (const line of PASTED.split('\n')) {
      const c = canonicalize(line.trim());
      if (c !== null) expect(pageForms.has(c)).toBe(true);
    }
  });

  it('canonicalizes and keys tricky spellings exactly as Node does', async () => {
    await page.fill('#url-input', TRICKY);
    await page.click('#url-run');
    await page.waitForFunction((n) => document.getElementById('url-results')?.dataset['lines'] === String(n), TRICKY.split('\n').length);
    const rows = await page.$$eval('#url-keys tbody tr', (trs) => trs.map((tr) => [tr.querySelector('td code')?.textContent ?? '', tr.getAttribute('data-key') ?? '']));
    const rejectedLines = await page.$$eval('#url-rejected > li', (lis) => lis.map((li) => Number(li.getAttribute('data-line'))));
    const nodeForms = new Map<string, string>();
    const nodeRejected: number[] = [];
    TRICKY.split('\n').forEach((line, i) => {
      const c = canonicalize(line);
      if (c === null) nodeRejected.push(i + 1);
      else if (!nodeForms.has(c)) nodeForms.set(c, keyToHex(urlKey(c).key));
    });
    expect(rows).toEqual([...nodeForms]);
    expect(rejectedLines).toEqual(nodeRejected);
  });

  it('compares two texts: simhashes equal to Node, Hamming distance and verdict', async () => {
    const compare = async (a: string, b: string): Promise<Record<string, string>> => {
      await page.fill('#text-a', a);
      await page.fill('#text-b', b);
      await page.evaluate(() => document.getElementById('text-result')!.removeAttribute('data-state'));
      await page.click('#text-run');
      await page.waitForSelector('#text-result[data-state="done"]');
      return page.$eval('#text-result', (el) => ({ ...(el as HTMLElement).dataset }) as Record<string, string>);
    };
    const hex = (v: bigint): string => v.toString(16).padStart(16, '0');

    const same = await compare(TEXT_A, `  ${TEXT_A.replace(/ /g, '\n')}  `);
    expect(same).toMatchObject({ verdict: 'NoChange', distance: '0' });

    const cosmetic = await compare(TEXT_A, TEXT_B);
    expect(cosmetic['simhashA']).toBe(hex(simhashText(TEXT_A)));
    expect(cosmetic['simhashB']).toBe(hex(simhashText(TEXT_B)));
    expect(Number(cosmetic['distance'])).toBeLessThanOrEqual(3);
    expect(cosmetic['verdict']).toBe('Cosmetic');

    const real = await compare(TEXT_A, TEXT_C);
    expect(real['simhashB']).toBe(hex(simhashText(TEXT_C)));
    expect(Number(real['distance'])).toBeGreaterThan(3);
    expect(real['verdict']).toBe('Real');
  });

  it('clusters near-duplicate documents in list mode', async () => {
    await page.fill('#docs-input', [TEXT_A, TEXT_C, TEXT_B, 'A short unrelated note about rye bread prices.'].join('\n---\n'));
    await page.click('#docs-run');
    await page.waitForSelector('#docs-result[data-state="done"]');
    const data = await page.$eval('#docs-result', (el) => ({ ...(el as HTMLElement).dataset }));
    expect(data).toMatchObject({ documents: '4', clusters: '3', nearClusters: '1' });
    const members = await page.$$eval('#docs-result li[data-members]', (lis) => lis.map((li) => li.getAttribute('data-members')));
    expect(members).toEqual(['1,3', '2', '4']);
  });

  it('streams a 100k-URL batch through the seen-set in the Web Worker and counts exactly', async () => {
    const total = 100_000;
    const synth = new SyntheticUrls();
    synth.fill([], total);
    await page.fill('#big-count', String(total));
    await page.click('#big-run');
    await page.waitForSelector('#big-result[data-state="done"]', { timeout: 40_000 });
    const data = await page.$eval('#big-result', (el) => ({ ...(el as HTMLElement).dataset }));
    expect(Number(data['done'])).toBe(total);
    expect(Number(data['rejected'])).toBe(0);
    expect(Number(data['unique'])).toBe(synth.fresh);
    expect(Number(data['expected'])).toBe(synth.fresh);
    expect(Number(data['bytesPerUrl'])).toBeGreaterThan(0);
    expect(await page.getAttribute('#big-progress', 'value')).toBe('1');
    expect(await page.isEnabled('#big-run')).toBe(true);
  });

  it('cancels a 10-million-URL run between batches and reports what it did', async () => {
    await page.fill('#big-count', '10000000');
    await page.click('#big-run');
    await page.waitForFunction(() => Number(document.getElementById('big-result')?.dataset['done'] ?? 0) > 0);
    await page.click('#big-cancel');
    await page.waitForSelector('#big-result[data-state="cancelled"]', { timeout: 30_000 });
    const data = await page.$eval('#big-result', (el) => ({ ...(el as HTMLElement).dataset }));
    const done = Number(data['done']);
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(10_000_000);
    expect(done % 65_536).toBe(0); // stopped on a batch boundary
    expect(Number(data['unique'])).toBe(Number(data['expected']));
    expect(await page.isEnabled('#big-run')).toBe(true);
    // Leave the panel showing the finished 100k run for the screenshot.
    await page.fill('#big-count', '100000');
    await page.click('#big-run');
    await page.waitForSelector('#big-result[data-state="done"]', { timeout: 40_000 });
  });

  it('takes a screenshot into test-output/', async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    const file = join(OUTPUT_DIR, 'demo.png');
    await page.screenshot({ path: file, fullPage: true });
    expect(existsSync(file)).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it('can be driven from the keyboard: Ctrl+Enter in the list runs it, focus is visible', async () => {
    await page.fill('#url-input', 'https://a.example/x\nhttps://A.example/x#y');
    await page.focus('#url-input');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.getElementById('url-results')?.dataset['lines'] === '2');
    expect(await page.getAttribute('#url-results', 'data-unique')).toBe('1');
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return { id: el?.id ?? '', outline: el ? getComputedStyle(el).outlineStyle : '' };
    });
    expect(focused.id).toBe('url-run');
    expect(focused.outline).not.toBe('none');
    // Every form control has a label.
    const unlabeled = await page.$$eval('textarea, input, progress', (els) =>
      els.filter((e) => (e as HTMLInputElement).labels === null || (e as HTMLInputElement).labels!.length === 0).map((e) => e.id),
    );
    expect(unlabeled).toEqual([]);
    // Results are announced through polite live regions.
    const live = await page.$$eval('[aria-live="polite"]', (els) => els.map((e) => e.id));
    expect(live).toEqual(expect.arrayContaining(['url-summary', 'text-result', 'docs-summary', 'big-result']));
  });

  it('keeps working offline once loaded: the service worker serves the page with the server gone', async () => {
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 10_000 });
    await server!.close();
    server = undefined;
    await page.reload();
    await page.waitForSelector('html[data-ready="true"]', { timeout: 20_000 });
    await page.fill('#url-input', 'https://example.com/a\nhttps://EXAMPLE.com/a');
    await page.click('#url-run');
    await page.waitForFunction(() => document.getElementById('url-results')?.dataset['lines'] === '2');
    expect(await page.getAttribute('#url-results', 'data-unique')).toBe('1');
  });
});
