/**
 * A crawl's data directory holds one crawl: its checkpoints and settings.json carry the same
 * crawl identity (settings.ts `newCrawlId`), and a checkpoint of another crawl under this one's
 * settings.json — a file copied over another — is refused naming both files, where it was
 * resumed in silence (its frontier crawled under the other crawl's settings, its fetches made
 * and written again). Directories written before identities resume as before and get one.
 * And settings.json unreadable (empty after a power loss, before it was fsynced) is reported as
 * itself, with advice that fits: the checkpoint is not affected.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CHECKPOINT_FILE, JOURNAL_FILE } from '../../src/engine/datadir.js';
import { SETTINGS_FILE } from '../../src/engine/settings.js';
import { CorruptSettingsError, Engine, InvalidStateError, readPartition } from '../../src/index.js';
import { bufferIo } from '../cli/helpers.js';
import { FakeWeb } from './fake.js';
import { AGENT } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'meguri-crawl-id-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => {
  const d = join(root, `d${n++}`);
  mkdirSync(d);
  return d;
};

/** A small crawl of `origin` into `dataDir`: `maxPages` pages (all when undefined). */
async function crawl(dataDir: string, origin: string, maxPages?: number): Promise<Engine> {
  const w = new FakeWeb();
  w.site(origin, { '/': ['/1', '/2', '/3'], '/1': ['/4'], '/2': [], '/3': [], '/4': [] });
  const engine = new Engine({ seeds: [`${origin}/`], agent: AGENT, allowPrivate: true, resolve: async () => '127.0.0.2', fetcher: w, dataDir, concurrency: 1, ...(maxPages === undefined ? {} : { maxPages }), politeness: { minDelayMs: 1, startDelayMs: 1 } });
  for await (const _ of engine.run()) {
    // pages are not kept
  }
  await engine.close();
  return engine;
}

const crawlIdOf = (dir: string): { checkpoint: unknown; settings: unknown } => ({
  checkpoint: (readPartition(join(dir, CHECKPOINT_FILE)).meta.settings['engine'] as { crawl?: unknown }).crawl,
  settings: (JSON.parse(readFileSync(join(dir, SETTINGS_FILE), 'utf8')) as { crawl?: unknown }).crawl,
});

describe('a data directory holds one crawl', () => {
  it("settings.json and every checkpoint carry the crawl's identity; a resume keeps it", async () => {
    const dir = fresh();
    await crawl(dir, 'http://a.test', 2);
    const first = crawlIdOf(dir);
    expect(first.checkpoint).toMatch(/^[0-9a-f]{16}$/);
    expect(first.settings).toBe(first.checkpoint);
    await crawl(dir, 'http://a.test');
    expect(crawlIdOf(dir)).toEqual(first);
    // Another crawl has another.
    const other = fresh();
    await crawl(other, 'http://a.test', 2);
    expect(crawlIdOf(other).checkpoint).not.toBe(first.checkpoint);
  });

  it("another crawl's checkpoint and journal under this one's settings.json are refused naming both files, before anything is fetched", async () => {
    // The pair copied together passes every generation check: only the identity tells.
    const a = fresh();
    const b = fresh();
    await crawl(a, 'http://a.test', 2);
    await crawl(b, 'http://b.test', 2);
    for (const f of [CHECKPOINT_FILE, JOURNAL_FILE]) copyFileSync(join(b, f), join(a, f));
    const w = new FakeWeb();
    const engine = new Engine({ agent: AGENT, allowPrivate: true, resolve: async () => '127.0.0.2', fetcher: w, dataDir: a });
    const err = await engine
      .run()
      .next()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await engine.close();
    expect(err).toBeInstanceOf(InvalidStateError);
    const { checkpoint } = crawlIdOf(a);
    const saved = (JSON.parse(readFileSync(join(a, SETTINGS_FILE), 'utf8')) as { crawl: string }).crawl;
    expect((err as Error).message).toContain(`frontier.meguri is of crawl ${String(checkpoint)}, settings.json of crawl ${saved}: one of them was copied from another crawl`);
    expect(w.log).toEqual([]);
  });

  it('a directory written before identities resumes as before, and gets one', async () => {
    const dir = fresh();
    await crawl(dir, 'http://a.test', 2);
    const file = join(dir, SETTINGS_FILE);
    const { crawl: _, ...old } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(old));
    const before = crawlIdOf(dir).checkpoint;
    await crawl(dir, 'http://a.test');
    expect(crawlIdOf(dir)).toEqual({ checkpoint: before, settings: before });
  });
});

describe('settings.json unreadable', () => {
  it('is reported as itself (CorruptSettingsError), with advice that fits: the checkpoint is not affected', async () => {
    const dir = fresh();
    await crawl(dir, 'http://a.test', 2);
    writeFileSync(join(dir, SETTINGS_FILE), '');
    expect(() => new Engine({ agent: AGENT, dataDir: dir })).toThrow(CorruptSettingsError);
    const io = bufferIo();
    expect(await main(['crawl', '--data', dir], io)).toBe(1);
    const err = io.err();
    expect(err).toContain(`meguri: unreadable crawl settings ${join(dir, SETTINGS_FILE)}: is empty [MEGURI_ERR_CORRUPT_SETTINGS]`);
    expect(err).toContain('the checkpoint, journal and pages are not affected');
    expect(err).toContain(`mv ${join(dir, SETTINGS_FILE)} ${join(dir, SETTINGS_FILE)}.damaged`);
    expect(err).toContain(`resume giving the seed URLs again (the scope is drawn from them: without them every queued URL is out of scope; 'meguri export ${dir}' lists them at depth 0)`);
    expect(err).not.toMatch(/corrupt partition|restore it from a copy/);
    writeFileSync(join(dir, SETTINGS_FILE), '{"format":"other"}');
    const io2 = bufferIo();
    expect(await main(['crawl', '--data', dir], io2)).toBe(1);
    expect(io2.err()).toContain('is not a meguri settings file of version 1 [MEGURI_ERR_CORRUPT_SETTINGS]');
  });
});
