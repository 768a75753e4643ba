/**
 * The sim judged end to end: a small, deliberately plain polite crawler (written here, using
 * robots-parser and the sim's resolver) crawls a web with every misbehaviour turned on, and the
 * server-side verdict must be clean and its fetches must equal the ground truth exactly once.
 * Then deliberately rude request patterns must each be caught.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createSimWeb, formatPolitenessReport, PLAIN_MIX, type SimWeb } from '../../src/sim/index.js';
import { anchors, get, sleep } from './helpers.js';

const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof import('robots-parser').default;
type Robots = ReturnType<typeof robotsParser>;

const AGENT = 'meguri/1.0 (+https://example.test/bot)';
/** Slack the test crawler adds to every wait, absorbing event-loop lag on a busy machine. */
const MARGIN_MS = 60;

interface Task {
  key: string;
  robots: boolean;
  attempts: number;
}
interface HostRun {
  readonly name: string;
  readonly ip: string;
  readonly queue: Task[];
  robots: Robots | 'allow-all' | 'dead' | undefined;
  intervalMs: number;
  nextAt: number;
  lastStart: number;
  inFlight: boolean;
}

function keyOf(url: URL): string {
  const pairs = [...url.searchParams].filter(([k]) => !/^utm_/i.test(k) && k !== 'sid');
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return url.pathname + (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : '');
}

function retryAfterMs(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/**
 * Crawls every host of the web from its root: one request per host at a time, host and IP
 * intervals kept start to start (host intervals also from the previous completion), robots.txt
 * first (5xx retried, then treated as disallow-all), Retry-After honoured, 5xx and resets retried twice, redirects followed as new tasks, traps
 * skipped by asking the ground truth. Returns the (host, key) pairs answered 200.
 */
async function politeCrawl(sim: SimWeb): Promise<Set<string>> {
  const hosts = new Map<string, HostRun>();
  const ipNext = new Map<string, number>();
  const seen = new Set<string>();
  const fetched = new Set<string>();
  for (const h of sim.truth.hosts) {
    hosts.set(h.name, { name: h.name, ip: h.ip, queue: [{ key: '/robots.txt', robots: true, attempts: 0 }], robots: undefined, intervalMs: sim.options.hostIntervalMs, nextAt: 0, lastStart: 0, inFlight: false });
  }
  const enqueue = (url: URL): void => {
    const run = hosts.get(url.hostname);
    if (!run || run.robots === 'dead') return;
    const key = keyOf(url);
    const id = `${run.name} ${key}`;
    if (seen.has(id) || sim.truth.trapOf(run.name, key)) return;
    if (run.robots !== undefined && run.robots !== 'allow-all' && !run.robots.isAllowed(url.href, AGENT)) return;
    seen.add(id);
    run.queue.push({ key, robots: false, attempts: 0 });
  };
  // Links found before a host's robots.txt is known wait here.
  const parked = new Map<string, URL[]>();
  const discover = (url: URL): void => {
    const run = hosts.get(url.hostname);
    if (!run) return;
    if (run.robots === undefined) parked.set(run.name, [...(parked.get(run.name) ?? []), url]);
    else enqueue(url);
  };
  for (const s of sim.seeds()) discover(new URL(s));

  let wake: (() => void) | undefined;
  let active = 0;
  const fetchOne = async (run: HostRun, task: Task): Promise<void> => {
    const url = new URL(sim.url(run.name, task.key));
    let res: Awaited<ReturnType<typeof get>> | undefined;
    try {
      res = await get(sim, url.href, { headers: { 'user-agent': AGENT }, maxBytes: task.robots ? 500 * 1024 : 1024 * 1024 });
    } catch {
      res = undefined; // connection reset: retried below
    }
    const status = res?.status ?? 0;
    const retry = retryAfterMs(res?.headers['retry-after']);
    if (retry !== undefined) run.nextAt = Math.max(run.nextAt, performance.now() + retry + MARGIN_MS);
    if (status === 0 || status >= 500 || status === 429) {
      task.attempts++;
      if (task.attempts < 3 || (retry !== undefined && task.attempts < 10)) run.queue.unshift(task);
      else if (task.robots) run.robots = 'dead';
      return;
    }
    if (task.robots) {
      if (status >= 300 && status < 400) {
        run.queue.unshift({ key: keyOf(new URL(res!.headers.location as string, url)), robots: true, attempts: 0 });
        return;
      }
      run.robots = status >= 400 ? 'allow-all' : robotsParser(url.href, res!.text);
      const delay = run.robots === 'allow-all' ? undefined : run.robots.getCrawlDelay(AGENT);
      run.intervalMs = Math.max(sim.options.hostIntervalMs, (delay ?? 0) * 1000);
      // Crawl-delay counts from the robots.txt request itself.
      run.nextAt = Math.max(run.nextAt, run.lastStart + run.intervalMs + MARGIN_MS);
      for (const u of parked.get(run.name) ?? []) enqueue(u);
      parked.delete(run.name);
      return;
    }
    if (status >= 300 && status < 400) {
      discover(new URL(res!.headers.location as string, url));
      return;
    }
    if (status !== 200) return;
    fetched.add(`${run.name} ${task.key}`);
    if (String(res!.headers['content-type']).startsWith('text/html') && res!.headers['content-encoding'] === undefined) {
      for (const a of anchors(res!.text, url.href)) {
        if (!a.nofollow && a.url.startsWith('http://')) discover(new URL(a.url));
      }
    }
  };

  for (;;) {
    const now = performance.now();
    let best: HostRun | undefined;
    let bestAt = Infinity;
    for (const run of hosts.values()) {
      if (run.inFlight || run.robots === 'dead' || run.queue.length === 0) continue;
      const at = Math.max(run.nextAt, ipNext.get(run.ip) ?? 0);
      if (at < bestAt) {
        bestAt = at;
        best = run;
      }
    }
    if (!best) {
      if (active === 0) break;
      await new Promise<void>((r) => (wake = r));
      continue;
    }
    if (bestAt > now) {
      await Promise.race([sleep(bestAt - now), new Promise<void>((r) => (wake = r))]);
      continue;
    }
    const run = best;
    const task = run.queue.shift()!;
    run.inFlight = true;
    run.lastStart = now;
    run.nextAt = now + run.intervalMs + MARGIN_MS;
    ipNext.set(run.ip, now + sim.options.ipIntervalMs + MARGIN_MS);
    active++;
    void fetchOne(run, task).finally(() => {
      // Also space from the completion: the server saw the request before it answered, so
      // this holds however late the request left this (shared, busy) event loop.
      run.nextAt = Math.max(run.nextAt, performance.now() + run.intervalMs);
      run.inFlight = false;
      active--;
      wake?.();
    });
  }
  return fetched;
}

describe('a polite crawl of a web with every misbehaviour', () => {
  it('leaves a clean server-side verdict and fetches the ground truth exactly once', async () => {
    const sim = createSimWeb({
      seed: 33,
      hosts: 10,
      pagesPerHost: 10,
      ips: 3,
      hostIntervalMs: 40,
      ipIntervalMs: 10,
      mix: { slowMs: 30, crawlDelaySeconds: [0.1], retryAfterSeconds: [1], robotsFlakyFailures: 1, brokenLinks: 0.2 },
    });
    await sim.start();
    try {
      const fetched = await politeCrawl(sim);
      const report = sim.politenessReport();
      if (!report.ok) console.log(formatPolitenessReport(report, 10));
      expect(Object.fromEntries(Object.entries(report.violations).map(([k, v]) => [k, v.length]))).toEqual({
        hostInterval: 0,
        ipInterval: 0,
        hostConcurrency: 0,
        disallowed: 0,
        beforeRobots: 0,
        retryAfter: 0,
        duplicateFetch: 0,
        misrouted: 0,
      });
      expect(report.ok).toBe(true);
      // What a crawler without a soft-404 detector fetches: the pages, the farm's linked dead
      // paths and the hostile downloads, nothing else, each once.
      const expected = new Set<string>();
      for (const h of sim.truth.hosts) {
        for (const p of [...h.pages, ...h.soft404]) expected.add(`${h.name} ${p}`);
        if (h.pages.length) for (const x of h.hostile) expected.add(`${h.name} ${x.path}`);
      }
      expect([...fetched].sort()).toEqual([...expected].sort());
      // The run met the misbehaviours it was meant to meet.
      const statuses = new Set(sim.log.map((e) => e.status));
      for (const s of [200, 301, 302, 404, 429, 503, 500]) expect(statuses, `status ${s}`).toContain(s);
      expect(sim.log.some((e) => e.retryAfter?.endsWith('GMT'))).toBe(true);
      expect(sim.log.filter((e) => e.kind === 'bait')).toEqual([]);
      expect(Object.keys(report.trapRequests)).toEqual([]);
      expect(sim.truth.hosts.every((h) => sim.maxInFlight(h.name) <= 1)).toBe(true);
    } finally {
      await sim.close();
    }
  });
});

describe('rude request patterns are each caught', () => {
  it('flags intervals, concurrency, robots, Retry-After, duplicates and misrouting', async () => {
    const sim = createSimWeb({
      seed: 5,
      hosts: 4,
      pagesPerHost: 8,
      ips: 2,
      mix: { ...PLAIN_MIX, throttled: 0.25, slow: 0.25, slowMs: 80, retryAfterSeconds: [2] },
    });
    await sim.start();
    try {
      const [a, b] = sim.truth.hosts.filter((h) => !h.features.throttled && h.features.slowMs === 0);
      const slow = sim.truth.hosts.find((h) => h.features.slowMs > 0)!;
      const throttled = sim.truth.hosts.find((h) => h.features.throttled)!;
      // Content without robots.txt, a disallowed path, a page twice, all at once.
      await Promise.all([
        get(sim, sim.url(a!.name, '/')),
        get(sim, sim.url(a!.name, a!.pages[1]!)),
        get(sim, sim.url(a!.name, a!.disallowed[0]!)),
      ]);
      await get(sim, sim.url(a!.name, '/'));
      // Two hosts on one address back to back.
      const sameIp = sim.truth.hosts.find((h) => h.ip === a!.ip && h.name !== a!.name) ?? b!;
      await Promise.all([get(sim, sim.url(a!.name, '/robots.txt')), get(sim, sim.url(sameIp.name, '/robots.txt'))]);
      // Overlapping requests to a slow host.
      await Promise.all([get(sim, sim.url(slow.name, '/')), get(sim, sim.url(slow.name, slow.pages[1]!))]);
      // Straight back after a 429.
      let retried = false;
      for (let i = 0; i < 12 && !retried; i++) {
        const r = await get(sim, sim.url(throttled.name, throttled.pages[i % throttled.pages.length]!));
        if (r.status === 429 || r.status === 503) {
          await get(sim, sim.url(throttled.name, '/'));
          retried = true;
        }
      }
      // The wrong address.
      await get(sim, sim.url(b!.name, '/'), { ip: sim.ips.find((ip) => ip !== b!.ip)! });

      const report = sim.politenessReport();
      expect(report.ok).toBe(false);
      for (const kind of ['hostInterval', 'ipInterval', 'hostConcurrency', 'disallowed', 'beforeRobots', 'retryAfter', 'duplicateFetch', 'misrouted'] as const) {
        expect(report.violations[kind].length, kind).toBeGreaterThan(0);
      }
      expect(report.violations.disallowed.map((v) => v.key)).toEqual([a!.disallowed[0]]);
      expect(report.violations.duplicateFetch.map((v) => `${v.host}${v.key}`)).toContain(`${a!.name}/`);
      expect(report.violations.hostConcurrency.some((v) => v.host === slow.name)).toBe(true);
      expect(sim.maxInFlight(slow.name)).toBe(2);
      expect(report.violations.retryAfter.every((v) => v.host === throttled.name)).toBe(true);
      // A later slice of the log is judged on its own.
      const since = sim.log.length;
      await sleep(300);
      await get(sim, sim.url(b!.name, '/robots.txt'));
      expect(sim.politenessReport({ sinceSeq: sim.log[since]!.seq }).ok).toBe(true);
    } finally {
      await sim.close();
    }
  });
});
