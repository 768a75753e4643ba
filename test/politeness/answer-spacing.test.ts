// A struggling server's widened interval counts from its answer, not from the request's start
// (src/frontier/outcome.ts `adaptPoliteness`, DESIGN §7). Counted from the start, a fetch that
// timed out after 30 s had used up any interval under 30 s, and the next request left the
// moment it failed: a loopback page that dripped its body for two minutes was asked again, or
// its host's next page was, within milliseconds of each timeout. Healthy answers, however slow,
// keep the start-to-start rule; a Retry-After still counts from the answer and is still told
// apart in the host's status.
import { describe, expect, it } from 'vitest';
import { Frontier, type Outcome } from '../../src/index.js';
import { explainHost } from '../../src/engine/index.js';
import { HostFlags } from '../../src/model/index.js';
import { politenessConfig } from '../../src/politeness/index.js';

const cfg = politenessConfig();
const host = 'slow.example';

function site(n: number): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true });
  for (let i = 0; i < n; i++) f.seed(`https://${host}/p/${i}`, host, n - i, 0, 0, 0);
  return f;
}

/** Dispatches the next URL at `startMs` and reports it answered `tookMs` later. */
function fetchOnce(f: Frontier, startMs: number, tookMs: number, answer: Partial<Outcome>): void {
  const r = f.dispatch(startMs);
  expect(r, `a dispatch at ${startMs}`).not.toBeNull();
  f.report({ row: r!.row, url: r!.url, status: 200, latencyMs: tookMs, ...answer }, startMs + tookMs);
}

const snapshot = (f: Frontier) => f.hostSnapshots(host)[0]!;

describe('a struggling server is spaced from its answer', () => {
  it('after a 30 s timeout the next start waits the widened interval from the failure', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 0, errorKind: 'timeout' });
    const s = snapshot(f);
    expect(s.intervalMs).toBe(cfg.defaultIntervalMs * cfg.backoff);
    // From the start it would be 2 s: long gone when the timeout was known.
    expect(f.nextEligible()).toBe(30_000 + 2000);
    expect(f.dispatch(31_999)).toBeUndefined();
    expect(f.dispatch(32_000)).not.toBeNull();
    expect(s.flags & HostFlags.SpacedFromAnswer).toBe(HostFlags.SpacedFromAnswer);
  });

  it('a slow 503 and a slow reset count from the answer too; a fast one changes nothing', () => {
    const f = site(5);
    fetchOnce(f, 0, 10_000, { status: 503 });
    expect(f.nextEligible()).toBe(10_000 + 2000);
    fetchOnce(f, 12_000, 20_000, { status: 0, errorKind: 'network' });
    expect(f.nextEligible()).toBe(32_000 + 4000);
    fetchOnce(f, 36_000, 5, { status: 503 });
    // Answered at once: from the answer is 5 ms later than from the start, nothing more.
    expect(f.nextEligible()).toBe(36_005 + 8000);
  });

  it('a healthy answer, however slow, keeps the start-to-start interval', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 200 });
    const s = snapshot(f);
    expect(f.nextEligible()).toBe(s.lastDispatchMs + s.intervalMs);
    expect(f.nextEligible()!).toBeLessThan(30_000);
    expect(s.flags & HostFlags.SpacedFromAnswer).toBe(0);
  });

  it('one broken page among working ones (a page fault) holds the interval from the start', () => {
    const f = site(5);
    fetchOnce(f, 0, 100, { status: 200 });
    const before = snapshot(f).intervalMs;
    fetchOnce(f, 1000, 15_000, { status: 500 });
    const s = snapshot(f);
    expect(s.intervalMs).toBe(before);
    expect(f.nextEligible()).toBe(1000 + before);
  });

  it('a Retry-After longer than the interval still counts from the answer, and the status tells the two apart', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 0, errorKind: 'timeout' });
    const spaced = explainHost(snapshot(f), 31_000, cfg);
    expect(spaced.why).toBe('backoff');
    expect(spaced.category).not.toBe('blocked');
    expect(spaced.nextAtMs).toBe(32_000);
    fetchOnce(f, 32_000, 20_000, { status: 429, retryAfter: '120' });
    expect(f.nextEligible()).toBe(52_000 + 120_000);
    expect(snapshot(f).flags & HostFlags.SpacedFromAnswer).toBe(0);
    const held = explainHost(snapshot(f), 60_000, cfg);
    expect(held.why).toBe('retry-after');
    expect(held.category).toBe('blocked');
  });

  it('the flag and the window survive a checkpoint', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 0, errorKind: 'timeout' });
    const g = Frontier.recover(f.checkpoint());
    expect(g.hostSnapshots(host)[0]!.flags & HostFlags.SpacedFromAnswer).toBe(HostFlags.SpacedFromAnswer);
    expect(g.nextEligible()).toBe(32_000);
  });
});
