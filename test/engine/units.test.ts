/**
 * The engine's small parts on their own: host explanations (live and from a checkpoint), the
 * journal record codec, the per-IP send gate, the waker, and the per-origin caches of the
 * scope and the host directory.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  CorruptJournalError,
  changeOf,
  explainHost,
  Frontier,
  type HostSnapshot,
  HostFlags,
  hostStatesFromPartition,
  politenessConfig,
  readPartition,
  Waker,
  writePartition,
} from '../../src/index.js';
import { decodeRecord, encodeRecord, outcomeRecord, recordOutcome } from '../../src/engine/records.js';
import { SendGate } from '../../src/engine/send-gate.js';
import { HostDirectory } from '../../src/engine/host-directory.js';
import { Scope, canonicalPattern } from '../../src/engine/scope.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const policy = politenessConfig({ floorMs: 250, defaultIntervalMs: 1000 });
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

function snap(over: Partial<HostSnapshot>): HostSnapshot {
  return {
    name: 'a.example',
    ip: '192.0.2.1',
    state: 'parked',
    flags: 0,
    intervalMs: 1000,
    crawlDelayMs: 0,
    nextEligibleMs: NOW,
    ipEligibleMs: 0,
    lastDispatchMs: NOW - 1000,
    latencyMs: 20,
    queued: 3,
    urlBudget: 0,
    depthCap: 0,
    admitted: 3,
    ceilingStreak: 0,
    inFlightUrl: undefined,
    ...over,
  };
}

describe('explainHost', () => {
  it('names each reason a host is idle, in words the CLI prints', () => {
    const cases: [Partial<HostSnapshot>, string, RegExp][] = [
      [{ flags: HostFlags.Dead, intervalMs: 300_000 }, 'dead', /^dead: interval pinned at the 5 min ceiling$/],
      [{ state: 'in-flight', inFlightUrl: 'https://a.example/x' }, 'fetching', /^fetching https:\/\/a\.example\/x$/],
      [{ flags: HostFlags.RobotsUnreachable }, 'robots-unreachable', /^robots\.txt unreachable$/],
      [{ queued: 0, urlBudget: 10, admitted: 10 }, 'budget-exhausted', /^budget exhausted \(10 of 10 URLs admitted\)$/],
      [{ queued: 0 }, 'done', /^nothing to fetch$/],
      [{ state: 'front' }, 'queued', /^3 URLs waiting for an active slot$/],
      [{ nextEligibleMs: NOW + 30_000, lastDispatchMs: NOW - 1000 }, 'retry-after', /^blocked until 12:00:30 \(in 30 s\) by Retry-After$/],
      [{ intervalMs: 8000, nextEligibleMs: NOW + 7000 }, 'backoff', /^backoff level 3 \(interval 8 s\), next at 12:00:07 \(in 7 s\)$/],
      [{ intervalMs: 10_000, crawlDelayMs: 10_000, nextEligibleMs: NOW + 9000 }, 'crawl-delay', /^crawl-delay 10 s, next at 12:00:09 \(in 9 s\)$/],
      [{ nextEligibleMs: NOW + 250, lastDispatchMs: NOW - 750 }, 'interval', /^interval 1 s, next at 12:00:00 \(in 250 ms\)$/],
      [{ ipEligibleMs: NOW + 400 }, 'shared-ip', /^waiting on shared IP 192\.0\.2\.1 until 12:00:00 \(in 400 ms\)$/],
      // The IP binds even when the host has a window of its own (here a Crawl-delay) that opens first.
      [
        { intervalMs: 10_000, crawlDelayMs: 10_000, nextEligibleMs: NOW + 300, ipEligibleMs: NOW + 900, ipIntervalMs: 600, ipHosts: ['d.example', 'a.example', 'c.example', 'b.example'] },
        'shared-ip',
        /^waiting on shared IP 192\.0\.2\.1 \(IP interval 600 ms; shared by 4 hosts: a\.example, b\.example, c\.example, …\) until 12:00:00 \(in 900 ms\)$/,
      ],
      [{ ipInFlight: 2, ipHosts: ['a.example', 'b.example'] }, 'shared-ip', /^waiting on shared IP 192\.0\.2\.1: 2 fetches in flight, its cap \(ipMaxInFlight\); shared by 2 hosts: a\.example, b\.example$/],
      [{}, 'ready', /^ready$/],
    ];
    const capped = { ...policy, ipMaxInFlight: 2 };
    for (const [over, why, reason] of cases) {
      const s = explainHost(snap(over), NOW, capped);
      expect([s.why, s.reason], why).toEqual([why, expect.stringMatching(reason)]);
    }
    const outage = explainHost(snap({ flags: HostFlags.RobotsUnreachable }), NOW, policy, { robotsRetryAtMs: NOW + 60_000, robotsStatus: 503 });
    expect(outage.reason).toBe('robots.txt unreachable (HTTP 503), retry at 12:01:00 (in 60 s)');
    expect(outage.category).toBe('blocked');
    expect(outage.robotsFailures).toBeUndefined();
    // No response: the fetcher's reason is given, and the tries count.
    const refused = explainHost(snap({ flags: HostFlags.RobotsUnreachable }), NOW, policy, { robotsRetryAtMs: NOW + 60_000, robotsStatus: 0, robotsError: 'connect ECONNREFUSED 127.0.0.1:1', robotsFailures: 1, robotsMaxAttempts: 5 });
    expect(refused.reason).toBe('robots.txt unreachable (no response: connect ECONNREFUSED 127.0.0.1:1, 1 of 5 tries failed), retry at 12:01:00 (in 60 s)');
    expect(refused.robotsFailures).toBe(1);
    // Tries while the crawl was offline are not counted: none yet is said as such, not "0 of 5".
    const offline = explainHost(snap({ flags: HostFlags.RobotsUnreachable }), NOW, policy, { robotsRetryAtMs: NOW + 60_000, robotsStatus: 0, robotsError: 'connect ENETUNREACH', robotsFailures: 0, robotsMaxAttempts: 5 });
    expect(offline.reason).toBe('robots.txt unreachable (no response: connect ENETUNREACH, not counted: the crawl was offline), retry at 12:01:00 (in 60 s)');
    expect(explainHost(snap({ queued: 2 }), NOW, policy, { robotsPending: true }).why).toBe('robots-pending');
    // A host whose robots.txt never answered is done, and says why (issue 23).
    const silent = explainHost(snap({ queued: 0 }), NOW, policy, { robotsGaveUp: { origin: 'http://a.example', status: 0, failures: 3, error: 'headers timeout after 30000 ms' } });
    expect([silent.why, silent.reason]).toEqual(['done', 'nothing to fetch: robots.txt of http://a.example unreachable, given up after 3 tries (no response: headers timeout after 30000 ms); its URLs were not fetched']);
    expect(silent.robotsGaveUp).toBe(true);
    expect(explainHost(snap({ queued: 0 }), NOW, policy).robotsGaveUp).toBeUndefined();
  });

  it('reads the same answers from a checkpoint', () => {
    const f = new Frontier(0, Math.floor(NOW / 3_600_000), { politeness: policy, resolver: () => '192.0.2.7', stateMachine: true });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    f.seed('https://a.example/2', 'a.example', 1, 0, 0);
    f.seed('https://b.example/', 'b.example', 1, 0, 0);
    const req = f.dispatch(NOW)!;
    f.report({ row: req.row, url: req.url, status: 429, retryAfter: '120' }, NOW + 10);
    const live = f.hostSnapshots().map((s) => explainHost(s, NOW + 20, policy));
    const dir = mkdtempSync(join(tmpdir(), 'meguri-units-'));
    try {
      const file = join(dir, 'f.meguri');
      writePartition(file, f.checkpointBytes());
      const fromFile = hostStatesFromPartition(readPartition(file), NOW + 20, policy);
      expect(fromFile.map((s) => [s.host, s.why, s.reason, s.queued])).toEqual(live.map((s) => [s.host, s.why, s.reason, s.queued]));
      expect(fromFile.find((s) => s.host === req.host)?.why).toBe('retry-after');
      const sibling = fromFile.find((s) => s.host !== req.host)!;
      expect(sibling.why).toBe('shared-ip');
      expect(sibling.reason).toMatch(/IP interval 250 ms; shared by 2 hosts: a\.example, b\.example\)/);
      expect(sibling.ipHosts).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      f.free();
    }
  });
});

describe('journal records', () => {
  it('round-trip an outcome as the frontier needs it (no body), and a dispatch', () => {
    const o = {
      row: 7,
      url: 'https://a.example/x',
      status: 200,
      etag: '"e1"',
      lastModified: 1_700_000_000,
      serverDate: 1_700_000_900,
      contentFp: 0xdead_beef_0123_4567n,
      simhash: 0x1n,
      latencyMs: 12.5,
      body: new Uint8Array(10),
      links: [{ url: 'https://a.example/y' }, { url: 'https://a.example/z', nofollow: true }],
    };
    const key = '0123456789abcdef0123456789abcdef';
    const rec = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 100, 150, o)), 0);
    expect(rec).toMatchObject({ t: 'o', k: key, h: 'a.example', at: 100, now: 150, s: 200, sd: 1_700_000_900, l: ['https://a.example/y'] });
    expect(recordOutcome(rec as Parameters<typeof recordOutcome>[0])).toEqual({
      row: -1,
      url: o.url,
      status: 200,
      retryAfter: undefined,
      etag: '"e1"',
      lastModified: 1_700_000_000,
      serverDate: 1_700_000_900,
      location: undefined,
      contentFp: 0xdead_beef_0123_4567n,
      simhash: 1n,
      latencyMs: 12.5,
      links: [{ url: 'https://a.example/y' }],
    });
    expect(decodeRecord(encodeRecord({ t: 'd', h: 'a.example', at: 5, r: 1 }), 1)).toEqual({ t: 'd', h: 'a.example', at: 5, r: 1 });
  });

  it("round-trips a robots.txt answer ('r') and refuses one that is not a RobotsCache snapshot", () => {
    const r = { t: 'r', origin: 'https://a.example', state: 'unreachable', text: 'User-agent: *\nDisallow: /x\n', fetchedAtMs: 10, refreshAtMs: 3010, lastStatus: 429, redirects: 0, failures: 2, outageSinceMs: 5, lastError: 'HTTP 429', heldUntilMs: 3010 } as const;
    expect(decodeRecord(encodeRecord(r), 0)).toEqual(r);
    const bad = [
      { ...r, origin: 'ftp://a.example' },
      { ...r, state: 'gone' },
      { ...r, text: 5 },
      { ...r, heldUntilMs: 1e300 },
      { ...r, failures: -1 },
      { ...r, fetchedAtMs: undefined },
      { ...r, lastError: {} },
    ];
    for (const b of bad) expect(() => decodeRecord(encodeRecord(b as unknown as typeof r), 4), JSON.stringify(b)).toThrow(CorruptJournalError);
  });

  it('refuses records it did not write', () => {
    const bad = ['not json', '[]', '{"t":"x"}', '{"t":"o","k":"zz","u":"u","h":"h","at":1,"now":1,"s":200}', '{"t":"d","h":"h"}', '{"t":"o","k":"0123456789abcdef0123456789abcdef","u":"u","h":"h","at":1,"now":1,"s":200,"fp":"xyz"}'];
    for (const b of bad) expect(() => decodeRecord(new TextEncoder().encode(b), 3), b).toThrow(CorruptJournalError);
  });
});

describe('a round trip journaled', () => {
  it("a page's refresh target survives the journal (rf) as the marked link; an old record has none; a bad one is refused", () => {
    const key = '0123456789abcdef0123456789abcdef';
    const o = { row: 1, url: 'https://a.example/', status: 200, links: [{ url: 'https://a.example/x' }, { url: 'https://a.example/en/', refresh: true }, { url: 'https://a.example/nf', nofollow: true, refresh: true }] };
    const rec = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, o)), 0) as Parameters<typeof recordOutcome>[0];
    expect(rec.rf).toBe('https://a.example/en/');
    expect(recordOutcome(rec).links).toEqual([{ url: 'https://a.example/x' }, { url: 'https://a.example/en/', refresh: true }]);
    expect(recordOutcome({ ...rec, rf: undefined }).links).toEqual([{ url: 'https://a.example/x' }, { url: 'https://a.example/en/' }]);
    expect(() => decodeRecord(new TextEncoder().encode(JSON.stringify({ ...rec, rf: 5 })), 0)).toThrow(CorruptJournalError);
  });

  it("a page's canonical naming another URL survives the journal (cn); one naming itself, or none, writes nothing; a bad one is refused", () => {
    const key = '0123456789abcdef0123456789abcdef';
    const base = { row: 1, url: 'https://a.example/t?p=3', status: 200 };
    const rec = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, { ...base, canonical: 'https://a.example/t' })), 0) as Parameters<typeof recordOutcome>[0];
    expect(rec.cn).toBe('https://a.example/t');
    expect(outcomeRecord(key, 'a.example', 1, 2, { ...base, canonical: base.url }).cn).toBeUndefined();
    expect(JSON.stringify(outcomeRecord(key, 'a.example', 1, 2, base))).not.toContain('"cn"');
    expect(() => decodeRecord(new TextEncoder().encode(JSON.stringify({ ...rec, cn: 5 })), 0)).toThrow(CorruptJournalError);
  });

  it("an outcome's reopenLocation survives the journal; an absent one is none, a bad one refused", () => {
    expectFlagJournaled({ row: 1, url: 'https://a.example/check', status: 302, location: 'https://a.example/a', reopenLocation: true }, 'reopenLocation', 'ro', { loc: 'https://a.example/a' }, 302);
  });
});

/**
 * A boolean outcome flag journaled as `short: 1`: it survives the round trip, an unset one is
 * not written and reads back as unset, and `short: true` is refused as corrupt.
 */
function expectFlagJournaled(o: Parameters<typeof outcomeRecord>[4], flag: 'reopenLocation' | 'offline' | 'soft404', short: 'ro' | 'off' | 's4', alongside: Record<string, unknown>, status: number): void {
  const key = '0123456789abcdef0123456789abcdef';
  const rec = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, o)), 0);
  expect(rec).toMatchObject({ [short]: 1, ...alongside });
  expect(recordOutcome(rec as Parameters<typeof recordOutcome>[0])[flag]).toBe(true);
  const plain = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, { ...o, [flag]: undefined })), 0);
  expect(short in JSON.parse(JSON.stringify(plain))).toBe(false);
  expect(recordOutcome(plain as Parameters<typeof recordOutcome>[0])[flag]).toBeUndefined();
  expect(() => decodeRecord(new TextEncoder().encode(`{"t":"o","k":"${key}","u":"u","h":"h","at":1,"now":1,"s":${status},"${short}":true}`), 0)).toThrow(CorruptJournalError);
}

describe('a soft-404 journaled', () => {
  it("an outcome's soft-404 verdict survives the journal (a replay counts it for maxPages as the live run did); absent is none, a bad one refused", () => {
    expectFlagJournaled({ row: 1, url: 'https://a.example/gone', status: 404, contentFp: 7n, soft404: true }, 'soft404', 's4', { s: 404, fp: '0000000000000007' }, 404);
  });
});

describe('a failure kind journaled', () => {
  it("a status-0 outcome's errorKind survives the journal (a cut-off page replays as a page fault); a status one's is not written; a bad one is refused", () => {
    const key = '0123456789abcdef0123456789abcdef';
    const o = { row: 1, url: 'https://a.example/p', status: 0, errorKind: 'incomplete' as const, latencyMs: 12 };
    const rec = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, o)), 0);
    expect(rec).toMatchObject({ ek: 'incomplete', s: 0 });
    expect(recordOutcome(rec as Parameters<typeof recordOutcome>[0]).errorKind).toBe('incomplete');
    const body = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, { ...o, status: 200, errorKind: 'body' as const })), 0);
    expect('ek' in JSON.parse(JSON.stringify(body))).toBe(false);
    const old = decodeRecord(new TextEncoder().encode(`{"t":"o","k":"${key}","u":"u","h":"h","at":1,"now":1,"s":0}`), 0);
    expect(recordOutcome(old as Parameters<typeof recordOutcome>[0]).errorKind).toBeUndefined();
    for (const ek of ['"teapot"', '1', '{}']) {
      expect(() => decodeRecord(new TextEncoder().encode(`{"t":"o","k":"${key}","u":"u","h":"h","at":1,"now":1,"s":0,"ek":${ek}}`), 0), ek).toThrow(CorruptJournalError);
    }
  });

  it("an outcome's offline verdict survives the journal (a resume spares what the live run spared); absent is not offline, a bad one refused", () => {
    expectFlagJournaled({ row: 1, url: 'https://a.example/p', status: 0, errorKind: 'connect', offline: true }, 'offline', 'off', { ek: 'connect' }, 0);
  });
});

describe('churn fingerprints in the engine (issue 21)', () => {
  it('journal records carry the churn fingerprint; a record written before it (no cf) replays as unknown', () => {
    const key = '0123456789abcdef0123456789abcdef';
    const o = { row: 1, url: 'https://a.example/x', status: 200, contentFp: 5n, simhash: 6n, churnFp: 0x8000_0000_0000_0007n };
    const rec = decodeRecord(encodeRecord(outcomeRecord(key, 'a.example', 1, 2, o)), 0);
    expect(rec).toMatchObject({ cf: '8000000000000007' });
    expect(recordOutcome(rec as Parameters<typeof recordOutcome>[0]).churnFp).toBe(0x8000_0000_0000_0007n);
    const old = decodeRecord(new TextEncoder().encode(`{"t":"o","k":"${key}","u":"u","h":"h","at":1,"now":1,"s":200,"fp":"0000000000000005"}`), 0);
    expect(recordOutcome(old as Parameters<typeof recordOutcome>[0]).churnFp).toBeUndefined();
    expect(() => decodeRecord(new TextEncoder().encode(`{"t":"o","k":"${key}","u":"u","h":"h","at":1,"now":1,"s":200,"cf":"xyz"}`), 0)).toThrow(CorruptJournalError);
  });

  it("Page.change reads the request's previous churn fingerprint", () => {
    const req = { row: 0, key: new Uint32Array(4), url: 'u', host: 'h', depth: 0, dispatchedAtMs: 0, prevContentFp: 1n, prevSimhash: 0xf0n, prevChurnFp: 9n };
    expect(changeOf(req, { row: 0, url: 'u', status: 200, contentFp: 2n, simhash: 0xf0n, churnFp: 10n })).toBe('real');
    expect(changeOf(req, { row: 0, url: 'u', status: 200, contentFp: 2n, simhash: 0x0fn, churnFp: 9n })).toBe('cosmetic');
    // No churn fingerprint on the new side: the simhash rule, as before.
    expect(changeOf(req, { row: 0, url: 'u', status: 200, contentFp: 2n, simhash: 0xf1n })).toBe('cosmetic');
  });
});

describe('SendGate', () => {
  it('keeps one unsent request per IP and spaces the next from when the previous left', async () => {
    let now = 0;
    const starts: string[] = [];
    const spent: [string, number][] = [];
    const gate = new SendGate(
      () => now,
      () => 50,
      (group, _ip, at) => spent.push([group, at]),
    );
    gate.enter('10.0.0.1', 'a', 'A', () => starts.push('a'));
    gate.enter('10.0.0.1', 'b', 'B', () => starts.push('b'));
    gate.enter('10.0.0.2', 'c', 'C', () => starts.push('c'));
    gate.enter(undefined, 'd', 'D', () => starts.push('d'));
    expect(starts).toEqual(['a', 'c', 'd']);
    expect([gate.unsent, gate.held]).toEqual([3, 1]);
    now = 30;
    gate.sent('a', 30); // a left at 30: b may leave at 80
    expect(spent).toEqual([['A', 30]]);
    await new Promise((r) => setTimeout(r, 5));
    expect(starts).toEqual(['a', 'c', 'd']); // the clock says 30 < 80
    now = 80;
    await new Promise((r) => setTimeout(r, 60));
    expect(starts).toEqual(['a', 'c', 'd', 'b']);
    gate.done('b'); // b failed before leaving: releases without a step
    gate.sent('zzz', 90); // unknown ids are ignored
    expect(gate.unsent).toBe(2);
    gate.clear();
    expect([gate.unsent, gate.held]).toEqual([0, 0]);
  });
});

describe('Waker', () => {
  it('wakes on notify or timer, remembers a notify given while nobody waits, and counts', async () => {
    const w = new Waker();
    w.notify();
    await w.wait(10_000); // remembered: returns at once
    const t = performance.now();
    await w.wait(20);
    expect(performance.now() - t).toBeGreaterThanOrEqual(15);
    setTimeout(() => w.notify(), 5);
    await w.wait(10_000);
    expect([w.wakeups, w.timerWakeups]).toEqual([3, 1]);
  });

  it('keeps one timer across notifies, moves it only for an earlier deadline, and never holds the process (issue 19)', async () => {
    const w = new Waker();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    for (let i = 0; i < 100; i++) {
      // Counted around synchronous calls only: the test runner's own timers come and go across awaits.
      const idle = timers();
      const woke = w.wait(60_000);
      expect(timers()).toBe(idle + 1); // the waiter's deadline holds the process
      w.notify();
      expect(timers()).toBe(idle); // notified: the kept timer no longer does
      await woke;
    }
    expect([w.timersArmed, w.wakeups, w.timerWakeups]).toEqual([1, 100, 0]);
    // An earlier deadline moves the timer, and it ends the wait.
    await w.wait(5);
    expect([w.timersArmed, w.wakeups, w.timerWakeups]).toEqual([2, 101, 1]);
    // A kept timer firing before a later deadline re-arms for the rest instead of waking early
    // (or, if it fired before the wait began, was dropped and the wait arms one: two either way).
    const v = new Waker();
    const early = v.wait(5);
    v.notify();
    await early;
    await v.wait(40);
    expect([v.timersArmed, v.wakeups, v.timerWakeups]).toEqual([2, 2, 1]);
    // A wait without a deadline never wakes by a timer left from before.
    const u = new Waker();
    const first = u.wait(3);
    u.notify();
    await first;
    let resolved = false;
    const open = u.wait().then(() => (resolved = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(resolved).toBe(false);
    u.notify();
    await open;
    expect(u.timerWakeups).toBe(0);
  });
});

describe('Scope patterns as a browser spells them', () => {
  it('an internationalized host, an upper-case host and a non-ASCII path match the canonical URLs they name', () => {
    const seed = canonicalize('http://bücher.test/')!;
    const s = new Scope('any', [seed], ['http://Bücher.test/wiki/Café/**', 'https://EXAMPLE.com:443/docs/**'], ['**/東京/*']);
    expect(s.check(canonicalize('http://bücher.test/wiki/Café/page')!)).toBeUndefined();
    expect(s.check(canonicalize('http://xn--bcher-kva.test/wiki/Caf%C3%A9/x')!)).toBeUndefined();
    expect(s.check(canonicalize('http://bücher.test/wiki/Other/page')!)).toBe('not-included');
    expect(s.check(canonicalize('https://example.com/docs/a')!)).toBeUndefined();
    expect(s.check(canonicalize('https://example.com/docs/東京/a')!)).toBe('excluded');
    // Glob syntax and ASCII patterns are left as written.
    expect(canonicalPattern('https://*.example.com/**')).toBe('https://*.example.com/**');
    expect(canonicalPattern('**/*.pdf')).toBe('**/*.pdf');
    expect(canonicalPattern('https://[::1]:8080/{a,b}/**')).toBe('https://[::1]:8080/{a,b}/**');
  });
});

describe('Scope and HostDirectory by origin (issue 19: per-link caches)', () => {
  const hosts = ['a.example.com', 'b.example.com', 'example.com', 'x.example.org', 'bob.github.io', 'alice.github.io', '127.0.0.1', '[::1]'];
  const url = fc
    .tuple(fc.constantFrom('http', 'https'), fc.constantFrom(...hosts), fc.constantFrom('', ':8080', ':443'), fc.constantFrom('/', '/p/1', '?q=1', '#f', ''))
    .map(([s, h, port, rest]) => `${s}://${h}${port}${rest}`);

  it('a long-lived Scope answers as a fresh one would, across seeds that widen it (fast-check)', () => {
    fc.assert(
      fc.property(fc.constantFrom('host', 'domain', 'origin', 'any' as const), fc.array(fc.tuple(fc.boolean(), url), { maxLength: 40 }), (scope, ops) => {
        const seeds = ['https://a.example.com/'];
        const kept = new Scope(scope, seeds, [], ['**/*.pdf']);
        for (const [seed, u] of ops) {
          if (seed) {
            seeds.push(u);
            kept.addSeed(u);
          }
          expect(kept.check(u)).toBe(new Scope(scope, seeds, [], ['**/*.pdf']).check(u));
        }
      }),
      { seed: 1919, numRuns: 200 },
    );
  });

  it('HostDirectory.register groups a URL as on first sight, origin by origin', () => {
    fc.assert(
      fc.property(fc.array(url, { maxLength: 30 }), (urls) => {
        const d = new HostDirectory('registrable');
        for (const u of urls) expect(d.register(u)).toBe(new HostDirectory('registrable').register(u));
      }),
      { seed: 1920, numRuns: 100 },
    );
  });
});
