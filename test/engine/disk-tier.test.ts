/**
 * The engine under a memory budget (issue 20): `memoryBudget` with a data directory puts the
 * frontier's disk tier in `<data>/disk`; a crawl of the simulated web under a budget far too
 * small for its queues fetches every page the unbudgeted crawl fetches, each once, politely —
 * with rows spilled and read back on the way. And `meguri crawl --memory` parses sizes.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Engine, InvalidArgumentError } from '../../src/index.js';
import { resolveEngineOptions } from '../../src/engine/options.js';
import { bufferIo } from '../cli/helpers.js';
import { JUDGE_TOLERANCE_MS, answered, collect, diskTierSim, notFetchedOnce, simEngineOptions, violationCounts } from './helpers.js';

const INTERVAL_MS = 10;
const root = mkdtempSync(join(tmpdir(), 'meguri-disk-engine-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Crawls a fresh copy of the same simulated web; returns the pages fetched and what the server judged. */
async function crawl(name: string, memoryBudget: number) {
  const remote = await diskTierSim(7, INTERVAL_MS);
  const dataDir = join(root, name);
  const engine = new Engine({ ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: 6, dataDir, memoryBudget, checkpointIntervalMs: 500 });
  try {
    const pages = await collect(engine.run());
    const tier = engine.frontier?.diskTier();
    const { report, log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
    // Each sim listens on its own port: compare host and path.
    return { pages: pages.map((p) => p.url.replace(/:\d+\//, '/')).sort(), tier, report, counts: answered(log), sim: remote.sim, dataDir, reason: engine.stopReason };
  } finally {
    await engine.close();
    await remote.close();
  }
}

describe('the engine under a memory budget', () => {
  it('fetches the same pages as without, each once, politely, spilling to <data>/disk', async () => {
    const plain = await crawl('plain', 0);
    const tight = await crawl('tight', 64 * 1024);
    expect(plain.reason).toBe('drained');
    expect(tight.reason).toBe('drained');
    expect(plain.tier).toBeUndefined();
    expect(tight.tier!.rowsWritten).toBeGreaterThan(20);
    expect(tight.tier!.rowsRead).toBe(tight.tier!.rowsWritten);
    expect(existsSync(join(tight.dataDir, 'disk'))).toBe(true);
    expect(tight.pages).toEqual(plain.pages);
    expect(tight.pages.length).toBeGreaterThan(500);
    const { missing, twice } = notFetchedOnce(tight.sim, tight.counts);
    expect({ missing, twice }).toEqual({ missing: [], twice: [] });
    const v = violationCounts(tight.report);
    expect({ hostInterval: v['hostInterval'], ipInterval: v['ipInterval'], hostConcurrency: v['hostConcurrency'] }).toEqual({ hostInterval: 0, ipInterval: 0, hostConcurrency: 0 });
  }, 240_000);

  it('needs a data directory for the disk tier', () => {
    expect(() => new Engine({ agent: 'x/1.0 (+https://example.test)', seeds: ['https://a.example/'], memoryBudget: 1 << 20 })).toThrow(InvalidArgumentError);
    expect(() => new Engine({ agent: 'x/1.0 (+https://example.test)', seeds: ['https://a.example/'], memoryBudget: 1 << 20 })).toThrow(/memoryBudget needs dataDir/);
    // The same rule where every option is checked: the CLI's and settings' path too.
    expect(() => resolveEngineOptions({ agent: 'x/1.0 (+https://example.test)', memoryBudget: 1 << 20 })).toThrow(/memoryBudget needs dataDir/);
  });

  it('is refused in cluster mode, naming both options', async () => {
    // A slot checkpoint is a full image that loads every spilled URL back (docs/CLUSTER.md).
    const cluster = { redis: 'redis://127.0.0.1:1', crawl: 'c', store: join(root, 'store') };
    const o = { agent: 'x/1.0 (+https://example.test)', dataDir: join(root, 'cl'), memoryBudget: 1 << 20, cluster };
    expect(() => new Engine(o)).toThrow(InvalidArgumentError);
    expect(() => new Engine(o)).toThrow(/memoryBudget \(1048576\) is not supported with cluster: a slot checkpoint is a full image/);
    expect(() => resolveEngineOptions(o)).toThrow(/not supported with cluster/);
    // Without a budget, the same node is accepted (nothing connects before run()).
    await new Engine({ ...o, memoryBudget: 0 }).close();
  });

  it('meguri crawl --memory takes KiB/MiB/GiB sizes and names a bad one', async () => {
    for (const bad of ['lots', '4TB', '-1G', '100']) {
      const io = bufferIo();
      const code = await main(['crawl', 'https://a.example/', '--data', join(root, 'cli'), '--agent', 'x/1.0 (+https://example.test)', '--memory', bad], io);
      expect(code).toBe(2);
      expect(io.err()).toContain('--memory');
    }
  });
});
