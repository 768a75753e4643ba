// Versioned docs: each of 12 pages in 8 versions, the same bytes under each, no rel=canonical,
// every page linking its other versions. `meguri crawl` read 44 of the 96 pages as the site's
// not-found page ("soft-404s"; told 404, not recrawled) and listed the host as failing. With the
// soft-404 probe a made-up URL beside the fifth copy is asked first (a made-up version, where the
// copies differ); the site answers it 404, so the copies are pages: 0 soft-404s for 11 more requests. `--no-soft404-probe` reads them as before.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

const VERSIONS = ['latest', 'stable', '3.2', '3.1', '3.0', '2.9', '2.8', '2.7'];
const PAGES = ['index', 'install', 'quickstart', 'config', 'api', 'cli', 'faq', 'changelog', 'migrate', 'plugins', 'security', 'glossary'];
const asked: string[] = [];

const site = loopbackSite('meguri-soft404-probe-cli-', (req, res) => {
  const path = req.url ?? '/';
  if (path === '/robots.txt') return void res.writeHead(404).end();
  asked.push(path);
  if (path === '/') return void res.writeHead(302, { location: '/docs/latest/index.html' }).end();
  const m = /^\/docs\/([\w.]+)\/(\w+)\.html$/.exec(path);
  if (m !== null && VERSIONS.includes(m[1]!) && PAGES.includes(m[2]!)) {
    const [, v, p] = m;
    // The changelog differs in each version; the other pages are the same in all.
    const text = `<h1>${p}</h1>${Array.from({ length: 8 }, (_, i) => `<p>Paragraph ${i} of ${p}${p === 'changelog' ? ` for ${v}` : ''}: ${'words on the options '.repeat(5)}</p>`).join('')}`;
    const versions = VERSIONS.map((w) => `<a href="/docs/${w}/${p}.html">${w}</a>`).join(' ');
    const nav = PAGES.map((q) => `<a href="${q}.html">${q}</a>`).join(' ');
    return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>${p} — docs</title></head><body><div>${versions}</div><nav>${nav}</nav><main>${text}</main></body></html>`);
  }
  res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
});

interface Line {
  url: string;
  status: number;
  soft404: boolean;
  probe: boolean;
}
const lines = (data: string): Line[] => readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
const FLAGS = ['--agent', AGENT, '--allow-private', '--min-delay', '5ms', '--start-delay', '5ms', '--interval', '1h'];

describe('meguri crawl: versioned docs, copies that name no canonical', () => {
  it('asks a made-up URL before reading a shared body as the not-found page: every version a page, the probes marked and counted', async () => {
    asked.length = 0;
    const data = join(site.dir, 'probe');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', data, ...FLAGS]);
    expect(run.code, run.err).toBe(0);
    const all = lines(data);
    const pages = all.filter((l) => !l.probe && l.status === 200);
    expect(pages).toHaveLength(VERSIONS.length * PAGES.length);
    expect(all.filter((l) => l.soft404)).toEqual([]);
    const probes = all.filter((l) => l.probe);
    // One per page the same in every version: its copies differ in the version, so the probe
    // makes up a version (the site has none such: 404).
    expect(probes).toHaveLength(PAGES.length - 1);
    for (const p of probes) {
      expect(p.url).toMatch(new RegExp(`^${site.base}/docs/meguri-soft404-probe-[0-9a-z]{14}/\\w+\\.html$`));
      expect(p.status).toBe(404);
    }
    expect(asked.filter((p) => p.includes('meguri-soft404-probe-'))).toHaveLength(probes.length);
    expect(run.out).toContain(`${probes.length} 4xx ·`);
    expect(run.out).not.toMatch(/^ {2}failing /m);
    expect(run.out).toContain(
      `  soft-404  ${probes.length} made-up URL${probes.length === 1 ? '' : 's'} asked (a ten-digit id, a made-up hash, or …meguri-soft404-probe-…) before a body many URLs shared was read as the not-found page: ${probes.length} answered not found (or with another page), so the bodies shared there are pages, their URLs kept as pages — --no-soft404-probe skips the question`,
    );
  });

  it('--no-soft404-probe reads the shared bodies as the not-found page from the fifth copy on, and saves the flag for a resume', async () => {
    asked.length = 0;
    const data = join(site.dir, 'off');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', data, '--no-soft404-probe', ...FLAGS]);
    expect(run.code, run.err).toBe(0);
    // Eleven pages the same in eight versions: the fifth copy on of each, 4 × 11.
    expect(lines(data).filter((l) => l.soft404)).toHaveLength(4 * 11);
    expect(lines(data).filter((l) => l.probe)).toEqual([]);
    expect(asked.filter((p) => p.includes('meguri-soft404-probe-'))).toEqual([]);
    expect(run.out).toMatch(/^ {2}failing {3}127\.0\.0\.1 44× \(soft-404\)/m);
    expect(run.out).not.toContain('  soft-404  ');
    expect(existsSync(join(data, 'settings.json'))).toBe(true);
    expect(readFileSync(join(data, 'settings.json'), 'utf8')).toContain('no-soft404-probe');
  });
});
