/**
 * The read commands on a crawl whose checkpoint is incremental (issue 20): `export` and `stats`
 * see every URL — the spilled rows pulled back in from the disk tier, opened read-only — and
 * `inspect` reports the tier (URLs spilled, extents, row runs, manifest, files, bytes). The data directory is left byte for byte as it was.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Frontier, type SeedSpec, loadCoreSync, writePartition } from '../../src/index.js';
import { bufferIo } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'meguri-cli-disk-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('read commands on an incremental checkpoint', () => {
  it('export and stats count every URL, inspect reports the disk tier, nothing in the directory changes', async () => {
    loadCoreSync();
    const dir = join(root, 'crawl');
    const f = new Frontier(0, 0, { memoryBudget: 1 << 20, storeDir: join(dir, 'disk'), spillWindow: 8 });
    const specs: SeedSpec[] = [];
    for (let k = 0; k < 20_000; k++) specs.push({ url: `https://h${k % 50}.example/p/${k}`, host: `h${k % 50}.example`, priority: k % 5, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    f.seedBatch(specs);
    const spilled = f.diskTier()!.spilledUrls;
    expect(spilled).toBeGreaterThan(10_000);
    const image = f.checkpointIncremental();
    writePartition(join(dir, 'frontier.meguri'), image);
    f.free();
    const tier = join(dir, 'disk', 'spill-p0');
    const before = readdirSync(tier).map((n) => `${n} ${statSync(join(tier, n)).size}`).sort();

    const exp = bufferIo();
    expect(await main(['export', dir, '--format', 'jsonl'], exp)).toBe(0);
    const urls = exp.out().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { url: string }).url);
    expect(urls.length).toBe(20_000);
    expect(new Set(urls)).toEqual(new Set(specs.map((s) => s.url)));

    const stats = bufferIo();
    expect(await main(['stats', dir, '--json'], stats)).toBe(0);
    expect(stats.out()).toContain('20000');

    const ins = bufferIo();
    expect(await main(['inspect', join(dir, 'frontier.meguri'), '--json'], ins)).toBe(0);
    const report = JSON.parse(ins.out()) as { rows: number; diskTier: { spilledUrls: number; rowRuns: number; files: number; bytes: number } };
    // The image itself holds no rows: the resident ones are in the tier's row runs.
    expect(report.rows).toBe(0);
    expect(report.diskTier.rowRuns).toBeGreaterThan(0);
    expect(report.diskTier.spilledUrls).toBe(spilled);
    expect(report.diskTier.files).toBeGreaterThan(0);
    expect(report.diskTier.bytes).toBeGreaterThan(spilled * 20);
    const text = bufferIo();
    expect(await main(['inspect', join(dir, 'frontier.meguri')], text)).toBe(0);
    expect(text.out()).toMatch(/disk +[\d,]+ URLs spilled/);

    expect(readdirSync(tier).map((n) => `${n} ${statSync(join(tier, n)).size}`).sort()).toEqual(before);
  });
});
