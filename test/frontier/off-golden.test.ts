// DESIGN §9.6 pinned: a frontier without the freshness option dispatches exactly the sequence,
// and writes exactly the checkpoint bytes, that it did before freshness was wired in. The
// hashes below were taken from main at 9985b4e (before the wiring); if one of them changes,
// behaviour with freshness off changed. One deliberate change since: the `end` checkpoints of
// `full` and `threads` moved when a host pinned at the ceiling by a long delay rather than by
// failures stopped counting toward Dead (the stored ceilingStreak differs; the dispatch log
// and the mid-run checkpoints are unchanged). And one more (issue 22): `full` puts its 7 hosts
// on one address, whose window now advances by the address's own adaptive interval instead of
// max(ipFloor, the dispatching host's interval): its log, both checkpoints (which now carry
// the `ips` section) and its count (more starts fit before the drain's horizon) moved;
// `plain` and `threads` (no addresses) are unchanged.
// And another (issue 23, finding 2): every hash moved when latency began to feed the interval through the RFC 6298
// estimator (src/politeness/latency.ts) instead of one sample against an EWMA, healthy
// fetches began to narrow in proportion far above the floor, and host records gained
// RTTVAR and the rise score (format minor 3). This test's latencies are a 40–439 ms
// sawtooth, so its hosts do see rises; the dispatch counts moved with the intervals.
// And when a row's depth became the shortest path seen so far (src/frontier/intake.ts
// `rediscover`): `plain` and `full` rows reached again along shorter paths store the lower
// depth, so their checkpoints moved; every log and count is unchanged (`threads` untouched).
// And when ready hosts of equal best priority began to go least recently dispatched first
// (src/frontier/state.ts; by HostKey alone one host of an address took every slot of it):
// `plain` and `full` dispatch their equal-priority hosts in another order, so their logs and
// checkpoints moved; `plain` keeps its 60 dispatches, `full` makes 218 before the horizon
// instead of 225 (its fetcher's statuses — 429 with Retry-After, 503, 0 — go by dispatch
// index, so other hosts meet them and its one address widens and narrows at other times).
// `threads` (sharded ready banks, aged promotion) is unchanged.
// And when an address began to narrow as a host does (src/politeness `adaptIp`: max(narrowMs,
// 1/16 of its excess over ipFloorMs) per healthy answer instead of narrowMs alone): `full`, whose
// hosts share three addresses, moves its log and end checkpoint; its hosts leave in another
// order, so this cycling fetcher's 301s fall on other URLs (17 redirected where 19 were) and the
// count falls from 225 to 223. Its mid checkpoint, `plain` and `threads` are unchanged.
// A rate limit's answer within a limit already going spends no retry of its URL (blocks.ts
// `heardLimit`); this fetcher's 429s each start a limit (served answers between them), so they
// spend as before and no hash moved.
// The two changes together (address narrowing, equal-priority turn-taking) re-pinned `full`
// once more (218 dispatches, as with turn-taking alone).
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type FrontierOptions, type Outcome, xxh64 } from '../../src/index.js';

const HOUR = 3_600_000;

/** A small deterministic crawl: 7 hosts, 4 to 9 URLs each, mixed priorities, delays and IPs. */
function seeded(options: Partial<FrontierOptions>): Frontier {
  const f = new Frontier(5, 10, options);
  for (let h = 0; h < 7; h++) {
    const n = 4 + ((h * 5) % 6);
    for (let i = 0; i < n; i++) {
      f.seed(`https://g${h}.example/p/${i}`, `g${h}.example`, ((h + i) % 4) * 0.5, 10, 10 + (i % 3), h % 3 === 0 ? 1500 : 0);
    }
  }
  return f;
}

/** The n-th fetch's answer: statuses, validators, bodies and links all cycle deterministically. */
function fetcher(): (r: FetchRequest) => Outcome {
  let n = 0;
  const statuses = [200, 200, 304, 200, 404, 429, 200, 503, 301, 200, 0, 200];
  return (r) => {
    const i = n++;
    const status = statuses[i % statuses.length]!;
    const page = Number(/\/p\/(\d+)/.exec(r.url)?.[1] ?? 0);
    const version = BigInt(Math.floor(i / 5) % 3);
    return {
      row: r.row,
      url: r.url,
      status,
      latencyMs: 40 + ((i * 37) % 400),
      retryAfter: status === 429 ? '2' : undefined,
      location: status === 301 ? `https://g${(page + 1) % 7}.example/moved/${page}` : undefined,
      etag: status === 200 ? `"e${i % 4}"` : undefined,
      lastModified: status === 200 ? 1_700_000_000 + (i % 4) * 3600 : undefined,
      contentFp: status === 200 ? 1000n + version * 7n + BigInt(page % 2) : undefined,
      simhash: status === 200 ? 0xf0f0n ^ (version << BigInt(page % 9)) : undefined,
      links: status === 200 && page < 6 ? [{ url: `https://g${(page + 2) % 7}.example/p/${page + 10}` }, { url: `https://new${page % 3}.example/x/${i % 5}` }] : undefined,
    };
  };
}

const CONFIGS: Record<string, Partial<FrontierOptions>> = {
  plain: {},
  full: { stateMachine: true, scheduleIndex: true, prioritizer: true, resolver: (h) => `192.0.2.${h.length % 3}` },
  threads: { stateMachine: true, scheduleIndex: true, target: 2, dispatchThreads: 1, dispatchShards: 2, backQueuesPerThread: 1, rotationQuantum: 2, promoteAgeMs: 5000 },
};

function run(options: Partial<FrontierOptions>): { log: string; mid: string; end: string; count: number } {
  const f = seeded(options);
  const fetch = fetcher();
  const lines: string[] = [];
  const push = (d: { atMs: number; url: string; ip: string }) => lines.push(`${d.atMs} ${d.url} ${d.ip}`);
  f.drain(10 * HOUR, fetch, { limit: 25, untilMs: 400 * HOUR }).forEach(push);
  const mid = xxh64(f.checkpointBytes()).toString(16);
  f.drain(10 * HOUR, fetch, { untilMs: 400 * HOUR }).forEach(push);
  const end = xxh64(f.checkpointBytes()).toString(16);
  f.free();
  return { log: xxh64(lines.join('\n')).toString(16), mid, end, count: lines.length };
}

describe('freshness off: dispatch sequence and checkpoint bytes pinned to the pre-wiring frontier', () => {
  for (const [name, options] of Object.entries(CONFIGS)) {
    it(name, () => {
      const got = run(options);
      if (process.env.GOLDEN_PRINT) console.log(`GOLD ${name}: ${JSON.stringify(got)}`);
      expect(got).toEqual(GOLDEN[name]);
    });
  }
});

const GOLDEN: Record<string, { log: string; mid: string; end: string; count: number }> = {
  plain: { log: '9bc33d2295d303a0', mid: 'b60f85c7a209f71', end: '1d5a1ad49ea5f10', count: 60 },
  // full and threads re-pinned when a URL waiting for a retry went after its host's untried URLs (queues.ts
  // `keyOf`): their state machine retries this fetcher's failures, which now leave later (plain has no retries).
  full: { log: 'b8c3f88731a8ce18', mid: '21373427ebf2e05b', end: '256f973fc29b6e05', count: 218 },
  threads: { log: 'a94206dec07793e4', mid: 'e9a4a4ca40e93620', end: '8e39b09414af58a0', count: 226 },
};
