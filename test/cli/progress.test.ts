/**
 * The progress display: the politeness-bounded ETA, the status block's content, the in-place
 * redraw on a terminal (cursor up, clear line), one line per report in a log, and JSON events.
 */
import { describe, expect, it } from 'vitest';
import { JsonEvents, LineProgress, type StatusContext, TtyProgress, estimateEta, progressLine, statusLines } from '../../src/cli/progress.js';
import type { HostStatus, Progress } from '../../src/engine/index.js';

function progress(over: Partial<Progress> = {}): Progress {
  return {
    elapsedMs: 12_000,
    fetched: 100,
    fetchedThisRun: 100,
    pagesOk: 90,
    pagesPerSec: 10,
    inFlight: 0,
    queued: 40,
    urls: 200,
    hosts: { total: 3, ready: 1, waiting: 1, blocked: 1, dead: 0, idle: 0 },
    status2xx: 90,
    status3xx: 4,
    status4xx: 3,
    status429: 2,
    status5xx: 1,
    errors: 0,
    soft404: 0,
    robotsRequests: 3,
    bytes: 123_456,
    checkpoints: 1,
    wakeups: 300,
    offlineSinceMs: 0,
    ...over,
  };
}

function host(name: string, ip: string, queued: number, intervalMs: number, category: HostStatus['category'] = 'waiting'): HostStatus {
  return {
    host: name,
    ip,
    why: category === 'blocked' ? 'retry-after' : 'interval',
    category,
    reason: '',
    nextAtMs: undefined,
    intervalMs,
    crawlDelayMs: 0,
    backoffLevel: 0,
    queued,
    admitted: queued,
    urlBudget: 0,
    flags: 0,
    inFlightUrl: undefined,
  };
}

const ctx = (over: Partial<StatusContext> = {}): StatusContext => ({ title: 'meguri crawl → /data', eta: undefined, continuous: false, warcBytes: 2048, ...over });

describe('estimateEta', () => {
  it('is bounded by the slowest address: hosts sharing an IP take turns', () => {
    // Two hosts on one IP with 10 URLs at 1 s each, one host alone with 20 URLs at 0.5 s.
    const hosts = [host('a', '10.0.0.1', 10, 1000), host('b', '10.0.0.1', 10, 1000), host('c', '10.0.0.2', 20, 500)];
    const eta = estimateEta(progress({ queued: 40, pagesPerSec: 100 }), hosts, Infinity);
    // capacity: IP 1 serves 2 hosts / (1 s + 1 s) = 1/s; IP 2 serves 2/s.
    expect(eta.capacityPerSec).toBeCloseTo(3, 9);
    // the observed rate is capped by the capacity (40 / 3 s ≈ 13 s), but IP 1 needs 20 s alone.
    expect(eta.seconds).toBeCloseTo(20, 9);
    expect(eta.hostBound).toBe(true);
  });

  it('uses the observed rate when it is the slower one, and only counts what --max-pages leaves', () => {
    const hosts = [host('a', '10.0.0.1', 30, 100), host('b', '10.0.0.2', 30, 100)];
    const slow = estimateEta(progress({ queued: 60, pagesPerSec: 2, fetched: 0 }), hosts, Infinity);
    expect(slow.seconds).toBeCloseTo(30, 9);
    expect(slow.hostBound).toBe(false);
    const capped = estimateEta(progress({ queued: 60, pagesPerSec: 2, fetched: 90, pagesOk: 90 }), hosts, 100);
    expect(capped.remaining).toBe(10);
    expect(capped.seconds).toBeCloseTo(5, 9);
    // The limit counts pages OK: 100 fetches of which 30 failed leave 30 pages to go, not none.
    expect(estimateEta(progress({ queued: 60, pagesPerSec: 2, fetched: 100, pagesOk: 70 }), hosts, 100).remaining).toBe(30);
  });

  it('gives no capacity to blocked, dead and idle hosts, and says when nothing can move', () => {
    const eta = estimateEta(progress({ queued: 5, pagesPerSec: 0 }), [host('a', '10.0.0.1', 5, 1000, 'blocked'), host('b', '10.0.0.2', 0, 100, 'idle')], Infinity);
    expect(eta.capacityPerSec).toBe(0);
    expect(eta.seconds).toBe(Infinity);
    expect(estimateEta(progress({ queued: 0, inFlight: 0 }), [], Infinity).seconds).toBe(0);
    // Blocked until known times (Retry-After, a robots.txt retry): the earliest is named.
    const at = Date.UTC(2026, 0, 1, 12, 0, 30);
    const held = estimateEta(progress({ queued: 5, pagesPerSec: 0 }), [{ ...host('a', '10.0.0.1', 3, 1000, 'blocked'), nextAtMs: at + 60_000 }, { ...host('b', '10.0.0.2', 2, 1000, 'blocked'), nextAtMs: at }], Infinity);
    expect(held.blockedUntilMs).toBe(at);
    expect(statusLines(progress(), ctx({ eta: held })).join('\n')).toContain('ETA      unknown (every host with work is blocked; the first may go at 12:00:30 UTC; npx meguri hosts --why says why)');
    // Read at a known clock, the wait is named; a Retry-After of a day names the day too.
    const soon = estimateEta(progress({ queued: 5, pagesPerSec: 0 }), [{ ...host('a', '10.0.0.1', 3, 1000, 'blocked'), nextAtMs: at }], Infinity, at - 300_000);
    expect(soon.blockedForMs).toBe(300_000);
    expect(statusLines(progress(), ctx({ eta: soon })).join('\n')).toContain('the first may go at 12:00:30 UTC (in 5 min);');
    const tomorrow = estimateEta(progress({ queued: 5, pagesPerSec: 0 }), [{ ...host('a', '10.0.0.1', 3, 1000, 'blocked'), nextAtMs: at + 86_400_000 }], Infinity, at);
    expect(statusLines(progress(), ctx({ eta: tomorrow })).join('\n')).toContain('the first may go at 2026-01-02 12:00:30 UTC (in 24 h);');
  });

  it('counts down to a backed-off host\'s next start instead of standing still for its interval', () => {
    // A host widened to the 5-minute ceiling with 3 URLs left (a hostile site's retries): the
    // estimate was 3 × 300 s for the whole interval; read at a known clock it is the time to
    // its next start plus two more intervals, and falls as that start nears.
    const at = Date.UTC(2026, 0, 1, 12, 0, 0);
    const backedOff = (nextAtMs: number): ReturnType<typeof host> => ({ ...host('a', '10.0.0.1', 3, 300_000), nextAtMs });
    const etaAt = (nowMs: number | undefined): number => estimateEta(progress({ queued: 3, inFlight: 0, pagesPerSec: 0 }), [backedOff(at)], Infinity, nowMs).seconds;
    expect(etaAt(undefined)).toBeCloseTo(900, 9);
    expect(etaAt(at - 290_000)).toBeCloseTo(890, 9);
    expect(etaAt(at - 60_000)).toBeCloseTo(660, 9);
    expect(etaAt(at)).toBeCloseTo(600, 9);
    // A start that was due in the past (the host is ready) counts as now; never below it.
    expect(etaAt(at + 30_000)).toBeCloseTo(600, 9);
    // A window further away than one interval (a Crawl-delay just raised) counts one interval.
    expect(etaAt(at - 900_000)).toBeCloseTo(900, 9);
    // Over many hosts the capacity estimate counts from the soonest window too.
    const many = [0, 1, 2, 3].map((i) => ({ ...host(`h${i}`, `10.0.0.${i + 1}`, 1, 10_000), nextAtMs: at + 1000 * (i + 1) }));
    const eta = estimateEta(progress({ queued: 4, inFlight: 0, pagesPerSec: 0 }), many, Infinity, at);
    expect(eta.capacityPerSec).toBeCloseTo(0.4, 9);
    // 1 s to the soonest window, then the other three at 0.4/s: 8.5 s, not 4 / 0.4 = 10 s.
    expect(eta.seconds).toBeCloseTo(8.5, 9);
  });
});

describe('statusLines', () => {
  it('in continuous mode names the next fetch when it is a while off (a recrawl due next hour)', () => {
    const now = Date.UTC(2026, 0, 1, 12, 10, 0);
    const at = Date.UTC(2026, 0, 1, 13, 0, 0);
    const text = (nextFetch?: StatusContext['nextFetch']): string => progressLine(progress({ queued: 0, inFlight: 0 }), ctx({ continuous: true, nextFetch }));
    expect(text({ atMs: at, nowMs: now })).toContain('ETA continuous (recrawl); next fetch at 13:00:00 UTC (in 50 min)');
    // About to go, unknown, or nothing at all wants a fetch: the plain words.
    expect(text({ atMs: now + 2000, nowMs: now })).toMatch(/ETA continuous \(recrawl\)$/);
    expect(text(undefined)).toMatch(/ETA continuous \(recrawl\)$/);
    expect(text({ atMs: at + 86_400_000, nowMs: now })).toContain('next fetch at 2026-01-02 13:00:00 UTC (in 24.8 h)');
  });

  it('shows fetched, rate, queue, host categories, 429s and errors, and the ETA with its bound', () => {
    const eta = estimateEta(progress(), [host('a', '10.0.0.1', 40, 500)], Infinity);
    const text = statusLines(progress(), ctx({ eta })).join('\n');
    expect(text).toContain('meguri crawl → /data · 12 s');
    expect(text).toMatch(/fetched {2}100 {2}\(10\.0 pages\/s\) {3}in flight 0 {3}queue 40/);
    expect(text).toContain('hosts    3: ready 1 · waiting 1 · blocked 1 · dead 0 · done 0');
    expect(text).toContain('429 2 · 5xx 1 · errors 0');
    expect(text).toMatch(/ETA {6}~20 s \(politeness allows ≤ 2\.0 pages\/s\)$/);
    expect(statusLines(progress(), ctx({ continuous: true })).join('\n')).toContain('ETA      continuous (recrawl)');
    expect(text).not.toContain('offline');
  });

  it('says when the crawl is offline (nothing answers: the network?) and until when retries are spared', () => {
    const offline = progress({ offlineSinceMs: Date.UTC(2026, 11, 6, 6, 40, 12) });
    const lines = statusLines(offline, ctx({}));
    expect(lines[4]).toBe('  offline  no server has answered since 06:40:12 (is the network down?); unreachable hosts spend no retries until 07:40:12, then drain');
    expect(progressLine(offline, ctx({}))).toMatch(/; offline: no server has answered since 06:40:12 \(is the network down\?\); .* until 07:40:12, then drain$/);
    expect(progressLine(progress(), ctx({}))).not.toContain('offline');
  });
});

describe('views', () => {
  it('redraws the block in place on a terminal', () => {
    let out = '';
    const view = new TtyProgress({ write: (s: string) => (out += s), isTTY: true, columns: 100 });
    view.update(progress({ fetched: 1 }), ctx());
    const first = out;
    expect(first).not.toContain('\x1b[6F'); // nothing to move over yet
    view.update(progress({ fetched: 2 }), ctx());
    view.note('stopping');
    view.finish(progress({ fetched: 3 }), ctx());
    const frames = out.split('\x1b[6F');
    expect(frames.length).toBe(3); // a first draw, then two redraws over its 6 lines (the last adds the note)
    expect(out).toContain('\x1b[6F\x1b[2Kmeguri crawl');
    expect(out).toMatch(/fetched {2}3 /);
    expect(out.endsWith('\x1b[2K  stopping\n')).toBe(true);
    // Every line is cleared before it is written, and fits the terminal.
    for (const line of out.split('\n').filter(Boolean)) {
      expect(line.replace(/\x1b\[\d+F/, '').startsWith('\x1b[2K')).toBe(true);
      expect(line.replace(/\x1b\[\d*[A-Z]/g, '').length).toBeLessThan(100);
    }
  });

  it('writes one line per report in a log, and one JSON object per line with --json', () => {
    let log = '';
    const lines = new LineProgress({ write: (s: string) => (log += s) });
    lines.update(progress(), ctx());
    lines.update(progress({ fetched: 150 }), ctx());
    expect(log.split('\n').filter(Boolean)).toHaveLength(2);
    expect(log).toMatch(/^\[12 s\] fetched 100 \(10\.0\/s\), in flight 0, queue 40, hosts ready\/waiting\/blocked\/dead 1\/1\/1\/0, 429s 2, errors 1/);
    expect(log).not.toContain('\x1b');
    let json = '';
    const events = new JsonEvents({ write: (s: string) => (json += s) });
    events.update(progress(), ctx());
    events.emit('page', { url: 'http://a.test/', fp: 0x12n });
    const parsed = json.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed[0]).toMatchObject({ type: 'progress', fetched: 100, queued: 40, status429: 2, etaSeconds: null, warcBytes: 2048 });
    expect(parsed[1]).toEqual({ type: 'page', url: 'http://a.test/', fp: '0000000000000012' });
  });
});
