// The crawl command's own flags saved with a crawl (src/cli/saved-flags.ts): a resume with
// `--data DIR` alone keeps --warc-redact, --warc, --header, --requisites, --no-learn-* … as
// started; --unset drops one; secrets are never written to settings.json.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackSite } from '../engine/helpers.js';
import { parseCommand } from '../../src/cli/args.js';
import { CRAWL_SPEC } from '../../src/cli/crawl.js';
import { SAVED_FLAGS, isSecretHeaderName, resumeFlags } from '../../src/cli/saved-flags.js';
import { AGENT, inProcess } from './helpers.js';
import { type AddressInfo, createServer } from 'node:net';

const dir = mkdtempSync(join(tmpdir(), 'meguri-saved-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const parse = (...argv: string[]) => parseCommand(CRAWL_SPEC, ['--data', '/tmp/x', ...argv]);
const FILE = '/tmp/x/settings.json';

describe('resumeFlags', () => {
  it('saves the flags given, secrets left out with a note, paths made absolute', () => {
    const r = resumeFlags(
      parse('--requisites', '--header', 'Accept-Language: ja', '--header', 'Authorization: Bearer s3cret', '--header', 'X-Api-Key: k', '--proxy', 'http://me:pw@proxy.test:3128', '--warc', 'rel/warc', '--ca', 'ca.pem', '--memory', '64M', '--max-wait', '0'),
      undefined,
      FILE,
    );
    expect(r.save).toEqual({
      requisites: true,
      header: ['Accept-Language: ja'],
      warc: [resolve('rel/warc')],
      proxy: ['http://proxy.test:3128/'],
      ca: [resolve('ca.pem')],
      memory: ['64M'],
      'max-wait': ['0'],
    });
    expect(JSON.stringify(r.save)).not.toMatch(/s3cret|pw|"k"/);
    expect(r.notes.join('\n')).toMatch(/--header Authorization: not saved/);
    expect(r.notes.join('\n')).toMatch(/--header X-Api-Key: not saved/);
    expect(r.notes.join('\n')).toMatch(/--proxy: its user:password is not saved .* http:\/\/proxy\.test:3128\//);
    expect(r.changes).toEqual([]); // a new crawl changes nothing
    // What is sent this run is what was given, secrets included.
    expect(r.args.list('header')).toEqual(['Accept-Language: ja', 'Authorization: Bearer s3cret', 'X-Api-Key: k']);
    expect(r.args.text('proxy')).toBe('http://me:pw@proxy.test:3128');
  });

  it('fills in what was saved and not given, each checked by its flag row; a flag given overrides it', () => {
    const extra = { resolve: ['a.test=127.0.0.1'], 'warc-redact': true, 'no-learn-params': true, 'max-body': ['1M'], header: ['Accept-Language: ja'] };
    const r = resumeFlags(parse('--max-body', '2M'), extra, FILE);
    expect(r.args.flag('warc-redact')).toBe(true);
    expect(r.args.flag('no-learn-params')).toBe(true);
    expect(r.args.flag('requisites')).toBe(false);
    expect(r.args.pairs('resolve')).toEqual([['a.test', '127.0.0.1']]);
    expect(r.args.list('header')).toEqual(['Accept-Language: ja']);
    expect(r.args.number('max-body')).toBe(2 * 1024 * 1024);
    expect(r.changes).toEqual([{ flag: 'max-body', from: ['1M'], to: ['2M'] }]);
    expect(r.save['max-body']).toEqual(['2M']);
    expect(r.save['warc-redact']).toBe(true);
  });

  it('--unset drops a saved flag; an unknown one and a contradiction are refused', () => {
    const extra = { 'warc-redact': true, proxy: ['http://proxy.test:3128/'] };
    const r = resumeFlags(parse('--unset', 'warc-redact', '--unset=--proxy'), extra, FILE);
    expect(r.args.flag('warc-redact')).toBe(false);
    expect(r.args.has('proxy')).toBe(false);
    expect(r.save).toEqual({});
    expect(r.changes).toEqual([
      { flag: 'warc-redact', from: true, to: undefined },
      { flag: 'proxy', from: ['http://proxy.test:3128/'], to: undefined },
    ]);
    expect(() => resumeFlags(parse('--unset', 'max-pages'), extra, FILE)).toThrow(/--unset max-pages: not a saved flag of meguri crawl .*give another value/);
    expect(() => resumeFlags(parse('--unset', 'proxy', '--proxy', 'http://p.test/'), extra, FILE)).toThrow(/--unset proxy and --proxy contradict each other/);
  });

  it('reads the older form (resolve as pairs, maxLinks and maxBody as numbers, an empty resolve list)', () => {
    const r = resumeFlags(parse(), { resolve: [['a.test', '10.0.0.7']], maxLinks: 50, maxBody: 131072 }, FILE);
    expect(r.args.pairs('resolve')).toEqual([['a.test', '10.0.0.7']]);
    expect(r.args.number('max-links')).toBe(50);
    expect(r.args.number('max-body')).toBe(131072);
    expect(r.save).toEqual({ resolve: ['a.test=10.0.0.7'], 'max-links': ['50'], 'max-body': ['131072'] });
    expect(resumeFlags(parse(), { resolve: [] }, FILE).save).toEqual({});
  });

  it('refuses a saved value its flag would refuse, naming the file and the way out', () => {
    expect(() => resumeFlags(parse(), { 'max-body': ['12'] }, FILE)).toThrow(/settings\.json: the saved --max-body "12" is refused \(--max-body: expected a size.*\); give --max-body again or --unset max-body/);
    expect(() => resumeFlags(parse(), { requisites: 'yes' }, FILE)).toThrow(/the saved --requisites is damaged/);
    expect(() => resumeFlags(parse(), { header: ['Accept-Language: ja', 3] }, FILE)).toThrow(/the saved --header is damaged/);
    expect(() => resumeFlags(parse(), { warc: true }, FILE)).toThrow(/the saved --warc is damaged/);
  });

  it('every saved flag is a flag of meguri crawl; secret header names are told apart', () => {
    for (const f of SAVED_FLAGS) expect(CRAWL_SPEC.flags.some((row) => row.name === f), f).toBe(true);
    for (const n of ['Authorization', 'Proxy-Authorization', 'Cookie', 'X-Auth-Token', 'X-API-Key', 'Api-Key', 'X-Session', 'X-Client-Secret']) expect(isSecretHeaderName(n), n).toBe(true);
    for (const n of ['Accept-Language', 'X-Test', 'Referer', 'DNT', 'X-Forwarded-For']) expect(isSecretHeaderName(n), n).toBe(false);
  });
});

describe('meguri crawl: a resume with --data alone keeps the flags it was started with', () => {
  const seen: { path: string; lang: string | undefined; key: string | undefined }[] = [];
  const site = loopbackSite((req, res) => {
    const path = req.url ?? '/';
    seen.push({ path, lang: req.headers['accept-language'], key: req.headers['x-api-key'] as string | undefined });
    if (path === '/robots.txt') return void res.writeHead(404).end();
    if (path.endsWith('.png')) return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const n = Number(/\/p(\d+)$/.exec(path)?.[1] ?? 0);
    // A session cookie, sent back on every later request: what --warc-redact hides.
    res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'sid=visitor123; Path=/' });
    res.end(`<html><body><img src="/img${n}.png"> page ${n} ${n < 6 ? `<a href="/p${n + 1}">next</a>` : ''}</body></html>`);
  });

  it('--warc-redact, --warc, --header and --requisites apply to the resumed run; the secret header does not', async () => {
    const data = join(dir, 'crawl');
    const warc = join(dir, 'archive');
    const first = await inProcess([
      'crawl', `http://127.0.0.1:${site.port()}/`, '--data', data, '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h',
      '--max-pages', '4', '--warc-redact', '--warc', warc, '--header', 'Accept-Language: ja', '--header', 'X-Api-Key: secret-api-key-value', '--requisites',
    ]);
    expect(first.code, first.err).toBe(0);
    expect(first.err).toMatch(/--header X-Api-Key: not saved/);
    const before = seen.length;
    const second = await inProcess(['crawl', '--data', data, '--max-pages', '100', '--interval', '1h']);
    expect(second.code, second.err).toBe(0);
    expect(second.err).toMatch(/resuming .* with its saved settings/);
    const resumed = seen.slice(before);
    expect(resumed.filter((s) => s.path.startsWith('/p')).length).toBeGreaterThan(0);
    expect(resumed.filter((s) => s.path.endsWith('.png')).length).toBeGreaterThan(0); // --requisites kept
    expect(resumed.every((s) => s.lang === 'ja')).toBe(true); // --header kept
    expect(resumed.every((s) => s.key === undefined)).toBe(true); // the secret one was not saved
    // Both runs wrote to --warc, never to the data directory's default; the cookie is hidden in both.
    expect(existsSync(join(data, 'warc'))).toBe(false);
    const files = readdirSync(warc);
    expect(files.length).toBe(2);
    const requests = files
      .map((f) => gunzipSync(readFileSync(join(warc, f))).toString('latin1'))
      .join('')
      .split('WARC-Type: request')
      .slice(1)
      .map((r) => r.slice(r.indexOf('GET '), r.indexOf('WARC/1.1')));
    const withCookie = requests.filter((r) => /\r\ncookie: /i.test(r));
    expect(withCookie.length).toBeGreaterThan(4);
    expect(requests.some((r) => r.includes('visitor123'))).toBe(false);
    const saved = JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')) as { settings: { extraSettings: Record<string, unknown> } };
    expect(saved.settings.extraSettings).toMatchObject({ 'warc-redact': true, warc: [warc], header: ['Accept-Language: ja'], requisites: true });
    expect(readFileSync(join(data, 'settings.json'), 'utf8')).not.toContain('secret-api-key-value'); // (not 'k1': a temporary directory's random name in the file held it once)
  });

  it('--unset on resume drops a saved flag and says so; a damaged saved value stops the run with the way out', async () => {
    const data = join(dir, 'unset');
    const site2 = `http://127.0.0.1:${site.port()}/`;
    expect((await inProcess(['crawl', site2, '--data', data, '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h', '--max-pages', '1', '--header', 'Accept-Language: ja'])).code).toBe(0);
    const before = seen.length;
    const run = await inProcess(['crawl', '--data', data, '--max-pages', '3', '--unset', 'header', '--interval', '1h']);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(/--header: Accept-Language: ja → not set \(dropped by --unset; recorded in settings\.json\)/);
    expect(seen.slice(before).length).toBeGreaterThan(0);
    expect(seen.slice(before).every((s) => s.lang === undefined)).toBe(true);
    const file = join(data, 'settings.json');
    const json = JSON.parse(readFileSync(file, 'utf8')) as { settings: { extraSettings: Record<string, unknown> } };
    json.settings.extraSettings['max-body'] = ['12'];
    writeFileSync(file, JSON.stringify(json));
    const bad = await inProcess(['crawl', '--data', data, '--interval', '1h']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/settings\.json: the saved --max-body "12" is refused .*give --max-body again or --unset max-body/);
  });
});

describe('meguri crawl --proxy: a proxy that cannot be reached stops the run before it starts', () => {
  it('names the proxy and fetches nothing; a saved one says how to drop it', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const data = join(dir, 'dead-proxy');
    const run = await inProcess(['crawl', 'http://127.0.0.1:9/', '--data', data, '--agent', AGENT, '--allow-private', '--interval', '1h', '--proxy', `http://me:pw@127.0.0.1:${port}`]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`--proxy http://127.0.0.1:${port}: cannot connect (ECONNREFUSED); nothing was fetched`);
    expect(run.err).not.toMatch(/saved with the crawl: give --proxy/);
    expect(run.err).not.toContain('pw');
    expect(existsSync(join(data, 'frontier.meguri'))).toBe(false);
    // A crawl saved with a proxy that has since gone away.
    const proxied = join(dir, 'saved-proxy');
    mkdirSync(proxied);
    const settings = { format: 'meguri-settings', v: 1, settings: { agent: AGENT, allowPrivate: true, extraSettings: { proxy: [`http://127.0.0.1:${port}/`] } }, history: [] };
    writeFileSync(join(proxied, 'settings.json'), JSON.stringify(settings));
    const resumed = await inProcess(['crawl', 'http://127.0.0.1:9/', '--data', proxied, '--interval', '1h']);
    expect(resumed.code).toBe(1);
    expect(resumed.err).toMatch(/it is the one saved with the crawl: give --proxy URL, or --unset proxy to fetch directly/);
  });
});
