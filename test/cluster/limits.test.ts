/**
 * `meguri cluster limit --max-depth / --max-urls-per-host` on a cluster crawl: the admission
 * limits were fixed with the crawl (a single process raises them on resume and fetches what they
 * parked); now a changed one reaches every open slot (`Frontier.setAdmission`; hosts first met
 * afterwards start with it too) and every slot opened later from a checkpoint.
 *
 * Real redis-server; in-process Engines in cluster mode with a scripted fetcher; the command
 * through the CLI's `main`.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CheckpointStore, SLOT_FORMAT_MINOR } from '../../src/cluster/store.js';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { bufferIo } from '../cli/helpers.js';
import { nodeWorld } from './redis.js';

const HOSTS = 4;
const PAGES = 12;
const ALL = HOSTS * PAGES;

/** HOSTS hosts × PAGES pages in a chain (p → p+1) with a link to the next host's same page: depth of h<i>/p/<p> is p + i. */
function chain(): { fetcher: { fetch: (req: FetchRequest) => Promise<Outcome> }; fetched: Set<string> } {
  const fetched = new Set<string>();
  const fetcher = {
    fetch: (req: FetchRequest): Promise<Outcome> => {
      if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      fetched.add(req.url);
      const m = /^http:\/\/h(\d+)\.test\/p\/(\d+)$/.exec(req.url)!;
      const h = Number(m[1]);
      const p = Number(m[2]);
      const links = [...(p + 1 < PAGES ? [`http://h${h}.test/p/${p + 1}`] : []), ...(h + 1 < HOSTS ? [`http://h${h + 1}.test/p/${p}`] : [])].map((url) => ({ url }));
      return Promise.resolve({ row: req.row, url: req.url, status: 200, links });
    },
  };
  return { fetcher, fetched };
}

describe('cluster limit on admission limits', () => {
  const world = nodeWorld('meguri-climits-');
  const common = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], grouping: 'host' as const, scope: 'any' as const, politeness: { minDelayMs: 200, startDelayMs: 200, ipMinDelayMs: 0 } };
  const cluster = (crawl: string, nodeId: string) => ({ redis: world.server.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20, nodeId });
  const drain = async (e: Engine, onPage?: () => void): Promise<void> => {
    const stopper = setTimeout(() => void e.stop(), 60_000);
    for await (const _ of e.run()) onPage?.();
    clearTimeout(stopper);
    await e.close();
  };
  const limit = (crawl: string, ...flags: string[]): Promise<number> => main(['cluster', 'limit', '--redis', world.server.url, '--crawl', crawl, '--store', world.store, ...flags], bufferIo());

  it('a depth cap raised while a node runs: it fetches what the cap parked, and hosts it meets later take the new cap', async () => {
    const { fetcher, fetched } = chain();
    const a = new Engine({ ...common, fetcher, seeds: ['http://h0.test/p/0'], maxDepth: 2, cluster: cluster('depth-live', 'A') });
    let changed: Promise<number> | undefined;
    await drain(a, () => void (changed ??= limit('depth-live', '--max-depth', '0')));
    expect(await changed).toBe(0);
    expect(fetched.size).toBe(ALL);
  }, 90_000);

  it('a depth cap raised between runs: the next node opens the slots from their checkpoints under it', async () => {
    const { fetcher, fetched } = chain();
    const a = new Engine({ ...common, fetcher, seeds: ['http://h0.test/p/0'], maxDepth: 2, cluster: cluster('depth-later', 'A') });
    await drain(a);
    // Depth ≤ 2: h0 p0–p2, h1 p0–p1, h2 p0.
    expect(fetched.size).toBe(6);
    // The parked URLs, and how a cluster crawl fetches them (not "a resume").
    const io = bufferIo();
    expect(await main(['stats', '--redis', world.server.url, '--crawl', 'depth-later', '--store', world.store], io)).toBe(0);
    expect(io.out()).toMatch(/trapped {5}\d+ past the depth cap \(meguri cluster limit … --max-depth \/ --max-urls-per-host N queues them\)/);
    expect(await limit('depth-later', '--max-depth', '4', '--max-urls-per-host', '0')).toBe(0);
    const b = new Engine({ ...common, fetcher, cluster: cluster('depth-later', 'B') });
    await drain(b);
    // Depth ≤ 4: p + h ≤ 4 over 4 hosts and 12 pages.
    expect(fetched.size).toBe(5 + 4 + 3 + 2);
    expect(b.stopReason).toBe('drained');
  }, 90_000);

  it('a URL budget raised between runs: the slots opened from checkpoints written under the old one take it', async () => {
    const { fetcher, fetched } = chain();
    const a = new Engine({ ...common, fetcher, seeds: ['http://h0.test/p/0'], maxDepth: 0, maxUrlsPerHost: 3, cluster: cluster('budget-later', 'A') });
    await drain(a);
    // Three URLs admitted per host: p0–p2 of each.
    expect(fetched.size).toBe(3 * HOSTS);
    expect(await limit('budget-later', '--max-urls-per-host', '0')).toBe(0);
    const b = new Engine({ ...common, fetcher, cluster: cluster('budget-later', 'B') });
    await drain(b);
    expect(fetched.size).toBe(ALL);
    expect(b.stopReason).toBe('drained');
  }, 90_000);

  it("a checkpoint's URL budget is read back as written, and checked", async () => {
    const st = new CheckpointStore(world.store, 'budget-meta');
    const meta = { format: 'meguri-slot/1', minor: SLOT_FORMAT_MINOR, crawl: 'budget-meta', slot: 0, epoch: 1, seq: 1, cursor: '0-0', applied: 0, digest: 0 } as const;
    expect((await st.read(await st.write({ ...meta, urlBudget: 0 }, new Uint8Array(0)))).meta.urlBudget).toBe(0);
    for (const [i, urlBudget] of [-1, 2.5, '7', null].entries()) {
      const rel = await st.write({ ...meta, seq: 2 + i, urlBudget: urlBudget as unknown as number }, new Uint8Array(0));
      await expect(st.read(rel)).rejects.toThrow(/urlBudget is not a count/);
    }
    // An older build's checkpoint has none: its hosts keep their budgets at open.
    expect((await st.read(await st.write({ ...meta, minor: 3, seq: 9 }, new Uint8Array(0)))).meta.urlBudget).toBeUndefined();
  });
});
