// A host answering 403 to every URL for a while (a firewall's rate rule) against pages it forbids
// (src/frontier/blocks.ts): a run of 403s has a page the host served asked again, and its answer
// says which. Virtual time throughout (drain's clock), so the counts and bounds are exact.
import { describe, expect, it } from 'vitest';
import { BLOCK_CEILING_MS, BLOCK_RUN, Frontier, type Outcome } from '../../src/index.js';
import { BLOCK_MAX_MS } from '../../src/frontier/blocks.js';
import { urlKeyHex } from '../../src/frontier/frontier.js';
import { ColumnId } from '../../src/frontier/table.js';
import {
  FORMAT_MINOR,
  type HostBlockImage,
  MAX_BLOCK_RUN_ROWS,
  MAX_FORBID_RUN,
  type PartitionImage,
  SectionId,
  decodePartition,
  encodePartition,
  partitionSections,
} from '../../src/format/index.js';
import { CorruptPartitionError, InvalidArgumentError } from '../../src/errors/index.js';
import { UrlStatus } from '../../src/model/index.js';

const HOST = 'a.example';
const url = (i: number): string => `https://${HOST}/p/${i}`;
const index = (u: string): number => Number(u.slice(u.lastIndexOf('/') + 1));

function site(n: number, options: ConstructorParameters<typeof Frontier>[2] = {}): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true, ...options });
  // Priorities fall with i, so the fresh order is p/0, p/1, …
  for (let i = 0; i < n; i++) f.seed(url(i), HOST, n - i, 0, 0, 0);
  return f;
}

const answer = (status: number) => (r: { row: number; url: string }): Outcome => ({ row: r.row, url: r.url, status, latencyMs: 20 });
const interval = (f: Frontier): number => f.hostSnapshots(HOST)[0]!.intervalMs;

/** Virtual time for the step-by-step tests: each step waits for the host's next turn. */
const clock = { now: 0 };

/** Dispatches the next URL of `f` at its turn and answers it `status`; returns its URL. */
function stepOn(f: Frontier, status: number): string {
  clock.now = Math.max(clock.now, f.nextEligible() ?? clock.now);
  const r = f.dispatch(clock.now)!;
  f.report(answer(status)(r), clock.now);
  return r.url;
}

/** `served` answers of 200, then `forbidden` of 403 (the clock starts at 0). */
function serveThenForbid(f: Frontier, served: number, forbidden: number): void {
  clock.now = 0;
  for (let i = 0; i < served; i++) stepOn(f, 200);
  for (let i = 0; i < forbidden; i++) stepOn(f, 403);
}

describe('a firewall that blocks the crawler for a while', () => {
  it('a run of 403s asks a served page again; its 403 puts the run back in the queue, and every page is fetched once the block ends', () => {
    const f = site(60);
    let blockedUntil = -1;
    // The firewall blocks for 20 s from the crawler's 10th request: every URL answers 403.
    let asked = 0;
    const answers: number[] = [];
    const log = f.drain(0, (r, now) => {
      asked++;
      if (asked === 10) blockedUntil = now + 20_000;
      answers.push(now < blockedUntil ? 403 : 200);
      return answer(answers[answers.length - 1]!)(r);
    });
    const served = new Map<number, number>();
    let forbidden = 0;
    log.forEach((d, i) => {
      if (answers[i] === 403) forbidden++;
      else served.set(index(d.url), (served.get(index(d.url)) ?? 0) + 1);
    });
    // Every page served in the end; nothing recorded gone.
    for (let i = 0; i < 60; i++) expect(served.get(i) ?? 0, `p/${i}`).toBeGreaterThanOrEqual(1);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 60 });
    expect(f.stats(0).byStatus['Gone'] ?? 0).toBe(0);
    // The canary was p/8, the last page served before the block: asked once more after the run.
    expect(log[9 + BLOCK_RUN]!.url).toBe(url(8));
    const b = f.blockCounts();
    expect(b.confirmed).toBe(1);
    expect(b.dismissed).toBe(0);
    // Each 403 of the block doubled the interval (from the opening 1 s, narrowed by the 9 pages
    // before it): few requests met the 20-s block.
    expect(forbidden).toBeLessThanOrEqual(BLOCK_RUN + 1 + 5);
    // Every 403 but the canary's was its URL's, retried.
    expect(b.retried).toBe(forbidden - 1);
  });

  it('the host narrows no further than one back-off step above its pace before the block', () => {
    const f = site(200);
    let blockedUntil = -1;
    let before = 0;
    let asked = 0;
    f.drain(0, (r, now) => {
      asked++;
      if (asked === 100) {
        before = interval(f);
        blockedUntil = now + 10_000;
      }
      return answer(now < blockedUntil ? 403 : 200)(r);
    });
    // The host had narrowed to the floor (250 ms) before the block; after it, a hundred healthy
    // answers narrow it no further than one step above that.
    expect(before).toBe(250);
    expect(interval(f)).toBe(500);
  });

  it('a block widens the interval no further than BLOCK_CEILING_MS', () => {
    const f = site(40, { retryLimit: 3 });
    let asked = 0;
    const seen: number[] = [];
    f.drain(0, (r) => {
      asked++;
      seen.push(interval(f));
      return answer(asked <= 5 ? 200 : 403)(r);
    });
    expect(Math.max(...seen)).toBe(BLOCK_CEILING_MS);
    expect(f.blockCounts().confirmed).toBe(1);
  });
});

describe('pages the host forbids', () => {
  it('a long run of forbidden pages costs a canary per doubling of the run, and every 403 is final', () => {
    const f = site(160);
    // Ten pages, then 150 member profiles closed to guests, in a row.
    const log = f.drain(0, (r) => answer(index(r.url) < 10 ? 200 : 403)(r));
    const canaries = log.filter((d) => index(d.url) < 10).length - 10;
    // Runs of 3, 6, 12, 24 and 48 403s each asked p/9 again (it served each time); the last 57
    // are short of a run of 96.
    expect(canaries).toBe(5);
    expect(log.length).toBe(160 + canaries);
    expect(f.blockCounts()).toEqual({ confirmed: 0, dismissed: 5, retried: 0 });
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 10, Gone: 150 });
    // Never backed off: 403s of pages are no sign of load.
    expect(interval(f)).toBeLessThanOrEqual(1000);
  });

  it('a host that never served the crawler is refusing it: no canary, every 403 final', () => {
    const f = site(20);
    const log = f.drain(0, answer(403));
    expect(log.length).toBe(20);
    expect(f.blockCounts()).toEqual({ confirmed: 0, dismissed: 0, retried: 0 });
    expect(f.stats(0).byStatus).toMatchObject({ Gone: 20 });
  });

  it('two forbidden pages in a row among working ones ask nothing again', () => {
    const f = site(30);
    const log = f.drain(0, (r) => answer(index(r.url) % 10 === 4 || index(r.url) % 10 === 5 ? 403 : 200)(r));
    expect(log.length).toBe(30);
    expect(f.blockCounts()).toEqual({ confirmed: 0, dismissed: 0, retried: 0 });
  });

  it("a block's 403s spend no retry past the first: URLs asked in it again and again are fetched once it lifts", () => {
    const f = site(12, { retryLimit: 1 });
    let asked = 0;
    // Two pages, then 40 requests of 403 (ten URLs, each asked about four times), then served.
    const log = f.drain(0, (r) => answer(++asked <= 2 || asked > 42 ? 200 : 403)(r));
    const forbidden = log.slice(2, 42);
    expect(new Set(forbidden.map((d) => d.url)).size).toBeLessThan(forbidden.length - 10);
    // Before: a URL's second 403 (retryLimit 1) ended it gone, and 10 of 12 pages were lost.
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 12 });
    expect(f.stats(0).byStatus['Gone'] ?? 0).toBe(0);
    // Every 403 but the canary's was taken as the block's.
    expect(f.blockCounts()).toEqual({ confirmed: 1, dismissed: 0, retried: 40 - 1 });
    expect(f.pending()).toBe(0);
  });

  it('a block that never lifts ends after BLOCK_MAX_MS: the 403s after it are final, each URL asked once', () => {
    const f = site(300, { retryLimit: 3 });
    let asked = 0;
    const log = f.drain(0, (r) => answer(++asked <= 2 ? 200 : 403)(r));
    expect(f.blockCounts().confirmed).toBe(1);
    // The block held the host's 403s for 30 minutes at up to 30 s apart, then gave up on it.
    const held = log.filter((d) => d.atMs <= BLOCK_MAX_MS).length;
    expect(held).toBeLessThan(300);
    const after = log.filter((d) => d.atMs > BLOCK_MAX_MS + BLOCK_CEILING_MS);
    expect(new Set(after.map((d) => d.url)).size).toBe(after.length);
    expect(log.length).toBeLessThan(300 + held);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, Gone: 298 });
  });
});

describe('the canary', () => {
  it('under due order (a freshness hook leading its URLs) it is asked first as well, and a block keeps every page', () => {
    // A week between crawls: the canary's own due hour is far behind every URL discovered now.
    const f = site(40, { scheduleIndex: true, freshness: { nextDue: (_r: unknown, now: number) => now + 168, queueOrder: 'due' as const } });
    let blockedUntil = -1;
    let asked = 0;
    const log = f.drain(0, (r, now) => {
      if (++asked === 6) blockedUntil = now + 20_000;
      return answer(now < blockedUntil ? 403 : 200)(r);
    });
    // The canary, the last page served (the 5th request), right after the run of three.
    expect(log[5 + BLOCK_RUN]!.url).toBe(log[4]!.url);
    expect(f.blockCounts().confirmed).toBe(1);
    expect(f.stats(0).byStatus['Gone'] ?? 0).toBe(0);
    expect(f.stats(0).byStatus['Crawled'] ?? 0).toBe(40);
  });

  it('an answer that says nothing (503) leaves its page crawled, spends no retry, and the next 403 asks again', () => {
    const f = site(20, { retryLimit: 0 });
    let asked = 0;
    const log = f.drain(0, (r) => {
      asked++;
      // Two pages; then 403s; the first canary (p/1, the 6th request) answers 503, the second 200.
      if (asked <= 2) return answer(200)(r);
      if (r.url === url(1)) return answer(asked === 6 ? 503 : 200)(r);
      return answer(403)(r);
    });
    // The 503 judged nothing: the next 403 asked again (200: the pages' own), then a run of 6.
    const canaries = log.filter((d) => d.url === url(1)).length - 1;
    expect(canaries).toBe(3);
    expect(f.blockCounts()).toMatchObject({ confirmed: 0, dismissed: 2 });
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, Gone: 18 });
  });

  it('a checkpoint taken while the canary is queued holds its page at rest and flags it; the recovered frontier asks it again', () => {
    const f = site(10);
    // The canary p/1 is queued first after the run; a checkpoint now writes it Crawled.
    serveThenForbid(f, 2, BLOCK_RUN);
    expect(f.stats(0).byStatus['DueRecrawl']).toBe(1);
    const bytes = f.checkpointBytes();
    const img = decodePartition(bytes);
    const status = img.columns.find((c) => c.id === ColumnId.Status)!.data;
    expect(Array.from(status).filter((v) => v === UrlStatus.Crawled)).toHaveLength(2);
    expect(img.hosts[0]!.block).toMatchObject({ blocked: false, canaryPending: true, forbidRun: BLOCK_RUN });
    expect(img.hosts[0]!.block!.runKeys).toHaveLength(4 * BLOCK_RUN);
    const g = Frontier.recover(bytes, { stateMachine: true });
    expect(g.stats(0).byStatus).toMatchObject({ Crawled: 1, DueRecrawl: 1, Gone: BLOCK_RUN });
    // Both ask it next, and its 403 puts the run back in the queue in each (before: the
    // recovered frontier kept the run gone).
    for (const x of [f, g]) {
      expect(stepOn(x, 403)).toBe(url(1));
      expect(x.stats(0).byStatus).toMatchObject({ Crawled: 2, RetryWait: BLOCK_RUN });
      expect(x.blockCounts().confirmed).toBe(1);
    }
  });

  it('a block goes on across a checkpoint: the recovered frontier retries its 403s', () => {
    const f = site(20);
    serveThenForbid(f, 2, BLOCK_RUN);
    expect(stepOn(f, 403)).toBe(url(1)); // the canary: a block
    const g = Frontier.recover(f.checkpoint(), { stateMachine: true });
    expect(g.stats(0).byStatus).toMatchObject({ Crawled: 2, RetryWait: BLOCK_RUN });
    // The next untried URL answers 403 in both: a block's, queued for a retry (before: gone in
    // the recovered frontier, a host that had not served it yet).
    for (const x of [f, g]) {
      stepOn(x, 403);
      expect(x.stats(0).byStatus).toMatchObject({ Crawled: 2, RetryWait: BLOCK_RUN + 1 });
      expect(x.stats(0).byStatus['Gone'] ?? 0).toBe(0);
    }
    // Served again: every URL fetched, none gone.
    g.drain(0, answer(200));
    expect(g.stats(0).byStatus).toMatchObject({ Crawled: 20 });
  });

  it("a block's age goes across a stop without the time stopped: the ban comes after BLOCK_MAX_MS of answers", () => {
    const f = site(400);
    serveThenForbid(f, 2, BLOCK_RUN);
    stepOn(f, 403); // the canary: the block begins
    const confirmedAt = clock.now;
    // 403s for ten minutes of the host's (backed-off) pace.
    while (clock.now < confirmedAt + 10 * 60_000) stepOn(f, 403);
    const g = Frontier.recover(f.checkpointBytes(), { stateMachine: true });
    const age = decodePartition(g.checkpointBytes()).hosts[0]!.block!.blockAgeMs;
    expect(age).toBeGreaterThanOrEqual(10 * 60_000);
    // Two days later the host still answers 403: the block goes on (retries), not a ban, until
    // BLOCK_MAX_MS of answers in all — the two days not counted.
    clock.now = confirmedAt + 2 * 86_400_000;
    const resumedAt = clock.now;
    while ((g.stats(0).byStatus['Gone'] ?? 0) === 0) stepOn(g, 403);
    const more = clock.now - resumedAt;
    expect(more).toBeGreaterThan(BLOCK_MAX_MS - age - 2 * BLOCK_CEILING_MS);
    expect(more).toBeLessThan(BLOCK_MAX_MS - age + 2 * BLOCK_CEILING_MS);
  });

  it('a ban goes across a checkpoint: a host refusing the crawler asks no canary after a resume', () => {
    const f = site(400);
    serveThenForbid(f, 2, BLOCK_RUN);
    stepOn(f, 403);
    while ((f.stats(0).byStatus['Gone'] ?? 0) === 0) stepOn(f, 403);
    const g = Frontier.recover(f.checkpointBytes(), { stateMachine: true });
    for (const x of [f, g]) {
      const gone = x.stats(0).byStatus['Gone']!;
      // Its 403s are final, one request each, no canary (before: the recovered frontier took the
      // host's crawled pages for service, asked a canary and gave the block another 30 minutes).
      for (let i = 0; i < 2 * BLOCK_RUN + 1; i++) stepOn(x, 403);
      expect(x.stats(0).byStatus['Gone']).toBe(gone + 2 * BLOCK_RUN + 1);
      expect(x.stats(0).byStatus['DueRecrawl'] ?? 0).toBe(0);
    }
    expect(g.blockCounts().confirmed).toBe(0);
  });

  it("a crash's journal replayed on a checkpoint taken while a canary was asked gives the live frontier's statuses", () => {
    for (const served of [2, 3, 5, 8]) {
      const f = site(20);
      serveThenForbid(f, served, BLOCK_RUN);
      const bytes = f.checkpointBytes();
      // Live: the canary's 403 confirms the block, then every URL serves; each answer journaled.
      const journal: [string, number, number][] = [];
      const live = (status: number): void => {
        clock.now = Math.max(clock.now, f.nextEligible() ?? clock.now);
        const r = f.dispatch(clock.now)!;
        f.report(answer(status)(r), clock.now);
        journal.push([r.url, status, clock.now]);
      };
      live(403);
      while (f.nextEligible() !== undefined) live(200);
      const g = Frontier.recover(bytes, { stateMachine: true });
      for (const [u, status, at] of journal) g.replay(urlKeyHex(u, HOST), { row: -1, url: u, status, latencyMs: 20 }, at, at);
      // Before: the recovered frontier asked another page than the live one as the canary, the
      // journal's canary answer and the run's 200s found no queued row, and 3 URLs stayed gone.
      expect(g.stats(0).byStatus, `${served} served`).toEqual(f.stats(0).byStatus);
      expect(g.blockCounts(), `${served} served`).toEqual(f.blockCounts());
    }
  });

  it('a host that served before a checkpoint is judged after it: its run of 403s asks a canary', () => {
    const f = site(10);
    serveThenForbid(f, 2, 0);
    const bytes = f.checkpointBytes();
    // Nothing but having served: no block record, the file as a minor-6 writer made it.
    expect(partitionSections(bytes).map((x) => x.name)).not.toContain('blocks');
    const g = Frontier.recover(bytes, { stateMachine: true });
    for (let i = 0; i < BLOCK_RUN; i++) stepOn(g, 403);
    // The served page p/1 (the last crawled in key order) is the canary (before: the recovered
    // host had not served, and its 403s were final).
    expect(g.stats(0).byStatus['DueRecrawl']).toBe(1);
    expect(stepOn(g, 403)).toBe(url(1));
    expect(g.stats(0).byStatus).toMatchObject({ Crawled: 2, RetryWait: BLOCK_RUN });
  });

  it("a host's own 403s stay judged across a checkpoint: the doubled threshold comes back", () => {
    const f = site(30);
    serveThenForbid(f, 2, BLOCK_RUN);
    expect(stepOn(f, 200)).toBe(url(1)); // the canary serves: the pages' own
    const g = Frontier.recover(f.checkpoint(), { stateMachine: true });
    for (const x of [f, g]) {
      // The next canary waits for a run of 2 · BLOCK_RUN.
      for (let i = 0; i < 2 * BLOCK_RUN - 1; i++) stepOn(x, 403);
      expect(x.stats(0).byStatus['DueRecrawl'] ?? 0).toBe(0);
      stepOn(x, 403);
      expect(x.stats(0).byStatus['DueRecrawl']).toBe(1);
    }
  });
});

describe("a host's block in the checkpoint (format minor 7, `blocks` section)", () => {
  const minorOf = (b: Uint8Array): number => new DataView(b.buffer, b.byteOffset).getUint16(10, true);
  /** A frontier whose host is blocking: two pages served, a run, the canary's 403. */
  const blockedImage = (): PartitionImage => {
    const f = site(20);
    serveThenForbid(f, 2, BLOCK_RUN);
    stepOn(f, 403);
    const img = f.checkpoint();
    f.free();
    return img;
  };

  it('round-trips the record, and is minor 7 only with one', () => {
    const img = blockedImage();
    const bytes = encodePartition(img);
    // Minor 7 still: a block without a rate limit (minor 8's field) is written as minor 7 wrote it.
    expect(minorOf(bytes)).toBe(7);
    expect(FORMAT_MINOR).toBe(8);
    const block = decodePartition(bytes).hosts[0]!.block!;
    expect(block).toEqual(img.hosts[0]!.block);
    expect(block).toMatchObject({ blocked: true, canaryPending: false, forbidRun: BLOCK_RUN, forbidThreshold: BLOCK_RUN });
    // The run's rows went back to the queue: none is named any more.
    expect(block.runKeys).toHaveLength(0);
    // Without the record: no section, the file of a minor-6 writer, read as a host in no block.
    const plain = encodePartition({ ...img, hosts: img.hosts.map(({ block: _b, ...h }) => h) });
    expect(partitionSections(plain).map((x) => x.name)).not.toContain('blocks');
    expect(minorOf(plain)).toBeLessThan(7);
    expect(decodePartition(plain).hosts[0]!.block).toBeUndefined();
    expect(SectionId.Blocks).toBe(11);
  });

  it('rejects a damaged record, naming the section and the field', () => {
    const img = blockedImage();
    const withBlock = (b: Partial<HostBlockImage>): Uint8Array => encodePartition({ ...img, hosts: img.hosts.map((h) => ({ ...h, block: { ...h.block!, ...b } })) });
    expect(decodePartition(withBlock({ runKeys: new Uint32Array(8).fill(7) })).hosts[0]!.block!.runKeys).toHaveLength(8);
    for (const [bad, field] of [
      [{ forbidThreshold: 0 }, /forbidThreshold/],
      [{ forbidRun: 1.5 }, /forbidRun/],
      [{ forbidRun: MAX_FORBID_RUN + 1 }, /forbidRun/],
      [{ blockAgeMs: -1 }, /blockAgeMs/],
      [{ blockFloorMs: Number.POSITIVE_INFINITY }, /blockFloorMs/],
      [{ limitWaitedMs: -1 }, /limitWaitedMs/],
    ] as const) {
      const bytes = withBlock(bad);
      expect(() => decodePartition(bytes), JSON.stringify(bad)).toThrow(CorruptPartitionError);
      expect(() => decodePartition(bytes)).toThrow(expect.objectContaining({ section: 'blocks' }));
      expect(() => decodePartition(bytes)).toThrow(field);
    }
    // An image no frontier makes is refused before it is written.
    expect(() => withBlock({ runKeys: new Uint32Array(4 * (MAX_BLOCK_RUN_ROWS + 1)) })).toThrow(InvalidArgumentError);
    expect(() => withBlock({ runKeys: new Uint32Array(6) })).toThrow(InvalidArgumentError);
    expect(() => withBlock({ canaryKey: new Uint32Array(3) })).toThrow(InvalidArgumentError);
  });

  it('a run key the table does not hold, or a row no longer gone, is left out on load', () => {
    const f = site(10);
    serveThenForbid(f, 2, BLOCK_RUN);
    const img = f.checkpoint();
    f.free();
    const keys = img.hosts[0]!.block!.runKeys;
    // One key made up, one kept: only the kept row waits for the canary's verdict.
    const mixed = Uint32Array.from([...keys.subarray(0, 4), 1, 2, 3, 4]);
    const g = Frontier.recover({ ...img, hosts: [{ ...img.hosts[0]!, block: { ...img.hosts[0]!.block!, runKeys: mixed } }] }, { stateMachine: true });
    expect(stepOn(g, 403)).toBe(url(1));
    expect(g.stats(0).byStatus).toMatchObject({ Crawled: 2, RetryWait: 1, Gone: BLOCK_RUN - 1 });
    g.free();
  });
});
