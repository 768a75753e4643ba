// A robots.txt Crawl-delay is followed down as well as up (src/frontier/dispatch.ts
// `robotsDelayChanged`): the frontier asks its robots seam at each dispatch, and a robots.txt
// read again without its Crawl-delay, or a resume under a lower cap, lowers the delay in force;
// a delay the seeds configured stays a floor. Virtual time throughout (drain's clock).
import { describe, expect, it } from 'vitest';
import { type Dispatched, Frontier, type FrontierOptions, type RobotsSeam } from '../../src/index.js';

const HOST = 'a.example';
const ok = (r: { row: number; url: string }) => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 });

/** A robots seam that is always ready and allows everything, its Crawl-delay read from `delay`. */
function robots(delay: { ms: number | undefined }): RobotsSeam {
  return { ready: () => true, isAllowed: () => true, crawlDelayMs: () => delay.ms };
}

function site(n: number, options: Partial<FrontierOptions>, seedDelayMs = 0): Frontier {
  // Start at the floor, as `meguri crawl --start-delay 5ms --min-delay 5ms` (audit e7, e13) does.
  const f = new Frontier(1, 0, { stateMachine: true, politeness: { floorMs: 5, defaultIntervalMs: 5, ipFloorMs: 5 }, ...options });
  for (let i = 0; i < n; i++) f.seed(`https://${HOST}/p/${i}`, HOST, n - i, 0, 0, seedDelayMs);
  return f;
}

const gaps = (log: readonly Dispatched[]): number[] => log.slice(1).map((d, i) => d.atMs - log[i]!.atMs);

describe('a robots.txt Crawl-delay', () => {
  it('dropped when robots.txt is read again: the gaps fall to the host\'s pace at once (they stayed 2,000 ms)', () => {
    const delay = { ms: 2000 as number | undefined };
    const f = site(30, { robots: robots(delay) });
    const before = f.drain(0, ok, 10);
    expect(gaps(before).every((g) => g === 2000)).toBe(true);
    delay.ms = undefined; // robots.txt read again after its lifetime: no Crawl-delay any more
    const after = f.drain(before.at(-1)!.atMs, ok);
    const g = gaps([before.at(-1)!, ...after]);
    // The window set at the old delay stands for one gap; then the start interval (5 ms).
    expect(g[0]).toBe(2000);
    expect(g.slice(1).every((x) => x <= 5)).toBe(true);
    expect(f.hostSnapshots(HOST)[0]!.crawlDelayMs).toBe(0);
  });

  it('lowered under a lower cap on resume: a checkpoint at 3 s, recovered where the seam says 1 s (it stayed 3 s)', () => {
    const delay = { ms: 3000 as number | undefined };
    const f = site(12, { robots: robots(delay) });
    const first = f.drain(0, ok, 3);
    expect(gaps(first)).toEqual([3000, 3000]);
    const bytes = f.checkpointBytes();
    // The engine's gate caps robots.txt's 3 s at `maxCrawlDelayMs`, now 1 s.
    const g = Frontier.recover(bytes, { stateMachine: true, politeness: { floorMs: 5, defaultIntervalMs: 5, ipFloorMs: 5 }, robots: robots({ ms: 1000 }) });
    expect(g.hostSnapshots(HOST)[0]!.crawlDelayMs).toBe(3000); // as recorded, until robots.txt is asked
    const rest = g.drain(first.at(-1)!.atMs, ok);
    const gs = gaps([first.at(-1)!, ...rest]);
    expect(gs[0]).toBe(3000); // the window recorded at the old delay
    expect(gs.slice(1).every((x) => x === 1000)).toBe(true);
    expect(rest).toHaveLength(9);
  });

  it('raised: the interval and the window follow it up; a seed\'s configured delay stays a floor below it', () => {
    const delay = { ms: undefined as number | undefined };
    const f = site(30, { robots: robots(delay) }, 1500);
    const a = f.drain(0, ok, 4);
    expect(gaps(a)).toEqual([1500, 1500, 1500]); // the seeds' delay
    delay.ms = 4000;
    const b = f.drain(a.at(-1)!.atMs, ok, 4);
    expect(gaps([a.at(-1)!, ...b])).toEqual([4000, 4000, 4000, 4000]);
    delay.ms = 500; // below the seeds' delay: theirs is in force again
    const c = f.drain(b.at(-1)!.atMs, ok, 4);
    expect(gaps([b.at(-1)!, ...c])).toEqual([4000, 1500, 1500, 1500]);
    expect(f.hostSnapshots(HOST)[0]!.crawlDelayMs).toBe(1500);
  });

  it('a checkpoint keeps the delay in force only: a load takes it as robots.txt\'s, and a seed of a known URL configures it again', () => {
    const f = site(12, { robots: robots({ ms: undefined }) }, 2000);
    const first = f.drain(0, ok, 3);
    const bytes = f.checkpointBytes();
    const again = (reseed: boolean): number[] => {
      const g = Frontier.recover(bytes, { stateMachine: true, politeness: { floorMs: 5, defaultIntervalMs: 5, ipFloorMs: 5 }, robots: robots({ ms: undefined }) });
      if (reseed) expect(g.seed(`https://${HOST}/p/0`, HOST, 1, 0, 0, 2000)).toBe(false);
      return gaps([first.at(-1)!, ...g.drain(first.at(-1)!.atMs, ok)]);
    };
    expect(again(true).every((x) => x === 2000)).toBe(true);
    // Without the seed: the recorded 2 s read as robots.txt's, which says none now.
    expect(again(false).slice(1).every((x) => x <= 5)).toBe(true);
  });
});
