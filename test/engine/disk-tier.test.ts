/**
 * The engine under a memory budget (issue 20): `memoryBudget` with a data directory puts the
 * frontier's disk tier in `<data>/disk`; a crawl of the simulated web under a budget far too
 * small for its queues fetches every page the unbudgeted crawl fetches, each once, politely —
 * with rows spilled and read back on the way. A budget under `MIN_MEMORY_BUDGET` (1 MiB) is
 * refused, by the Engine's options naming the field, value and minimum, and by `meguri crawl
 * --memory` from the same constant. And `meguri crawl --memory` parses sizes.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Engine, InvalidArgumentError, MIN_MEMORY_BUDGET } from '../../src/index.js';
import { resolveEngineOptions, setMemoryBudgetFloor } from '../../src/engine/options.js';
import { bufferIo } from '../cli/helpers.js';
import { JUDGE_TOLERANCE_MS, answered, collect, diskTierSim, notFetchedOnce, simEngineOptions, violationCounts } from './helpers.js';

const INTERVAL_MS = 10;
const root = mkdtempSync(join(tmpdir(), 'meguri-disk-engine-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => setMemoryBudgetFloor(undefined));

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
    // The simulated web (720 pages) spills only under a budget far below the Engine's minimum.
    setMemoryBudgetFloor(64 * 1024);
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

  it('is at least MIN_MEMORY_BUDGET (1 MiB) when given, naming the field, the value and the minimum; 0 is no tier', async () => {
    expect(MIN_MEMORY_BUDGET).toBe(1 << 20);
    const base = { agent: 'x/1.0 (+https://example.test)', dataDir: join(root, 'small') };
    for (const budget of [1, 64 * 1024, MIN_MEMORY_BUDGET - 1]) {
      expect(() => new Engine({ ...base, memoryBudget: budget })).toThrow(InvalidArgumentError);
      expect(() => resolveEngineOptions({ ...base, memoryBudget: budget })).toThrow(
        `EngineOptions: memoryBudget (${budget}) is below the minimum of 1048576 bytes (1 MiB): under it the frontier runs past the budget by up to 1 MiB`,
      );
      // Checked before the pairing with dataDir, so the message is the same without one.
      expect(() => resolveEngineOptions({ agent: base.agent, memoryBudget: budget })).toThrow(/memoryBudget \(\d+\) is below the minimum of 1048576 bytes/);
    }
    expect(() => resolveEngineOptions({ ...base, memoryBudget: 64 * 1024 })).toThrow(/give at least 1048576, or 0 for no disk tier/);
    // Still a non-negative integer first.
    expect(() => resolveEngineOptions({ ...base, memoryBudget: -1 })).toThrow(/memoryBudget/);
    expect(() => resolveEngineOptions({ ...base, memoryBudget: 1.5 * MIN_MEMORY_BUDGET + 0.5 })).toThrow(/memoryBudget/);
    for (const budget of [undefined, 0, MIN_MEMORY_BUDGET, 4 * MIN_MEMORY_BUDGET]) {
      expect(resolveEngineOptions({ ...base, memoryBudget: budget }).memoryBudget).toBe(budget ?? 0);
    }
    await new Engine({ ...base, memoryBudget: MIN_MEMORY_BUDGET }).close();
    // The CLI's --memory takes the same minimum: 1M passes the flag (and the engine), 1023K does not.
    const io = bufferIo();
    expect(await main(['crawl', 'https://a.example/', '--data', join(root, 'cli-small'), '--agent', base.agent, '--memory', '1023K'], io)).toBe(2);
    expect(io.err()).toContain(`--memory: expected a size such as 512K, 100M or 1G, >= ${MIN_MEMORY_BUDGET} bytes, received "1023K"`);
  });

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
