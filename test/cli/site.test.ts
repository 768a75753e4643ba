/**
 * `meguri crawl` pointed at a real site on loopback (issue 17's findings at the command line):
 * a loopback seed without --allow-private fails loudly before the crawl; the default scope keeps
 * the crawl on the site; settings are saved, so the printed resume hint works with no flags; a
 * flag given on resume overrides the saved value, is printed and recorded, and fetches the pages
 * the first setting refused; the summary counts outcomes; the README says how to get meguri.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { type LocalSite, serveSite } from '../engine/site.js';
import { AGENT, ROOT, bufferIo } from './helpers.js';

let site: LocalSite;
let root: string;
beforeAll(async () => {
  // Small and without a 500: the CLI's politeness starts each host at 1 s between requests.
  site = await serveSite({ pages: 3, serverErrors: false });
  root = mkdtempSync(join(tmpdir(), 'meguri-cli-site-'));
});
afterAll(async () => {
  await site.close();
  rmSync(root, { recursive: true, force: true });
});

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = bufferIo();
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}

const pagesOf = (dir: string): { url: string; status: number }[] =>
  readFileSync(join(dir, 'pages.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { url: string; status: number });

const RESOLVE = ['--resolve', 'site.test=127.0.0.1', '--resolve', 'docs.site.test=127.0.0.1'];

describe('meguri crawl pointed at a site', () => {
  it('refuses a loopback seed without --allow-private before crawling, naming the flag (exit 2)', async () => {
    site.requests.length = 0;
    const r = await run(['crawl', `${site.origin('site.test')}/`, '--data', join(root, 'loud'), '--agent', AGENT, ...RESOLVE]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`seed ${site.origin('site.test')}/ refused: loopback address 127.0.0.1 refused (to allow it: --allow-private)`);
    expect(r.err).toMatch(/every seed is refused by the settings .*--allow-private/);
    expect(site.requests).toEqual([]);
  });

  it('stays on the site by default, and the printed resume command works with no flags', { timeout: 90_000 }, async () => {
    site.requests.length = 0;
    const dir = join(root, 'scoped');
    const first = await run(['crawl', `${site.origin('site.test')}/`, '--data', dir, '--agent', AGENT, '--allow-private', ...RESOLVE, '--max-pages', '4', '--min-delay', '5ms', '--start-delay', '5ms']);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/this run {2}4 ok · /);
    expect(first.out).toContain(`npx meguri crawl --data ${dir} --max-pages N`);
    // Only --data and the new limit: agent, --allow-private, --resolve, --min-delay, --start-delay are saved.
    const second = await run(['crawl', '--data', dir, '--max-pages', '1000']);
    expect(second.code).toBe(0);
    expect(second.err).toContain(`resuming ${dir} with its saved settings (settings.json)`);
    expect(second.err).toContain('--max-pages: 4 → 1000 (overrides the saved value; recorded in settings.json)');
    const ok = pagesOf(dir).filter((p) => p.status === 200).map((p) => new URL(p.url));
    expect(ok.filter((u) => u.hostname === 'site.test').map((u) => u.pathname).sort()).toEqual([...site.sitePages].sort());
    expect(ok.filter((u) => u.hostname === 'docs.site.test').map((u) => u.pathname).sort()).toEqual(site.docsPages);
    expect([...new Set(site.requests.map((q) => q.host))].sort()).toEqual(['docs.site.test', 'site.test']);
    expect(second.out).toMatch(/ok · 1 redirects · 1 4xx · 0 5xx · 0 network errors · 0 refused by policy · 1 disallowed by robots\.txt · \d+ out of scope \(off-domain \d+\)/);
    expect(second.out).toMatch(/failing {3}site\.test 1× \(HTTP 404\)/);
    // A saved --allow-private can be turned off: the change is printed and recorded, and the
    // loopback site is refused again (nothing new is requested).
    site.requests.length = 0;
    const third = await run(['crawl', '--data', dir, '--no-allow-private', '--max-pages', '2000']);
    expect(third.err).toContain('--allow-private: true → false (overrides the saved value; recorded in settings.json)');
    expect(third.err).toContain(`seed ${site.origin('site.test')}/ refused: loopback address 127.0.0.1 refused (to allow it: --allow-private)`);
    expect(site.requests).toEqual([]);
    const settings = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { settings: { allowPrivate: boolean } };
    expect(settings.settings.allowPrivate).toBe(false);
    const both = await run(['crawl', '--data', dir, '--allow-private', '--no-allow-private']);
    expect(both.code).toBe(2);
    expect(both.err).toContain('--allow-private and --no-allow-private contradict each other');
  });

  it('a resume with a corrected flag fetches what the first run refused, and says so', { timeout: 90_000 }, async () => {
    site.requests.length = 0;
    const dir = join(root, 'wrong-flag');
    const first = await run(['crawl', `${site.origin('site.test')}/`, '--data', dir, '--agent', AGENT, '--allow-private', ...RESOLVE, '--scope', 'host', '--min-delay', '5ms', '--start-delay', '5ms']);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/out of scope \(off-host \d+\)/);
    expect(site.requests.some((q) => q.host === 'docs.site.test')).toBe(false);
    const why = await run(['hosts', dir, '--why']);
    expect(why.out).toMatch(/other\.test .*nothing to fetch; \d+ URLs? refused by a setting/);
    const second = await run(['crawl', '--data', dir, '--scope', 'domain']);
    expect(second.code).toBe(0);
    expect(second.err).toContain('--scope: host → domain (overrides the saved value; recorded in settings.json)');
    const docs = pagesOf(dir).filter((p) => new URL(p.url).hostname === 'docs.site.test');
    expect(docs.map((p) => [new URL(p.url).pathname, p.status]).sort()).toEqual([['/d/0', 200], ['/d/1', 200]]);
    const settings = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { settings: { scope: string; allowPrivate: boolean }; history: { changes: { name: string; from: unknown; to: unknown }[] }[] };
    expect(settings.settings).toMatchObject({ scope: 'domain', allowPrivate: true });
    expect(settings.history.at(-1)!.changes).toEqual([{ name: 'scope', from: 'host', to: 'domain' }]);
  });

  it('exits 3 and says why when nothing at all was fetched', async () => {
    const dir = join(root, 'nothing');
    const r = await run(['crawl', `${site.origin('site.test')}/nope`, '--data', dir, '--agent', AGENT, '--allow-private', ...RESOLVE, '--min-delay', '5ms', '--start-delay', '5ms']);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/nothing fetched: site\.test: HTTP 404/);
    // Every URL disallowed by robots.txt: that is the reason given (it said "no page answered").
    const barred = await run(['crawl', `${site.origin('site.test')}/private/x`, '--data', join(root, 'barred'), '--agent', AGENT, '--allow-private', ...RESOLVE, '--min-delay', '5ms', '--start-delay', '5ms']);
    expect(barred.code).toBe(3);
    expect(barred.out).toContain("nothing fetched: 1 URL(s) disallowed by the sites' robots.txt for this --agent — meguri obeys it");
  });
});

describe('getting it (finding 8)', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('the README says how to install from this repository and shows every command as npx meguri', () => {
    expect(readme).toMatch(/## Install/);
    expect(readme).toMatch(/npm install github:/);
    expect(readme).toMatch(/npm pack/);
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const commands = blocks.flatMap((b) => b.split('\n')).filter((l) => /(^|\s)meguri (demo|crawl|hosts|stats|schedule|inspect|export)\b/.test(l));
    expect(commands.length).toBeGreaterThan(5);
    for (const c of commands) expect(c, c).toMatch(/npx meguri /);
    expect(readme).toMatch(/--scope/);
    expect(readme).toMatch(/--include/);
    expect(readme).toMatch(/npx meguri crawl --data \.\/crawl {2,}/);
  });

  it('the command overview and the demo hints say npx meguri', async () => {
    const help = await run(['--help']);
    for (const line of help.out.split('\n').filter((l) => /^\s+\S*meguri (demo|crawl|hosts)/.test(l))) expect(line).toMatch(/npx meguri /);
    expect(readFileSync(join(ROOT, 'src/cli/demo.ts'), 'utf8')).toContain('look around  npx meguri hosts');
  });
});
