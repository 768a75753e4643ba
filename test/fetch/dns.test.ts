import { describe, expect, it } from 'vitest';
import { DnsCache, InvalidArgumentError, type ResolvedAddress, type Resolver, lookupResolver, systemResolver } from '../../src/index.js';

/** A virtual clock. */
function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** A resolver over a table, counting calls; names can be made to wait on a gate. */
function fakeResolver(table: Record<string, string | readonly (string | ResolvedAddress)[] | Error>) {
  const calls: string[] = [];
  const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  const resolver: Resolver = async (name) => {
    calls.push(name);
    await gates.get(name)?.promise;
    const v = table[name];
    if (v === undefined) throw Object.assign(new Error(`queryA ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    if (v instanceof Error) throw v;
    return v;
  };
  const gate = (name: string) => {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    gates.set(name, { promise, open });
    return open;
  };
  return { resolver, calls, gate };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('DnsCache', () => {
  it('caches a positive answer for its record TTL, then resolves again', async () => {
    const c = clock();
    const f = fakeResolver({ 'a.test': [{ address: '127.0.0.2', family: 4, ttlSeconds: 120 }] });
    const dns = new DnsCache({ resolver: f.resolver, now: c.now });
    const first = await dns.lookup('a.test');
    expect(first).toMatchObject({ ok: true, addresses: [{ address: '127.0.0.2', family: 4 }], expiresAtMs: c.now() + 120_000 });
    c.advance(119_999);
    expect((await dns.lookup('A.TEST.')).ok).toBe(true);
    expect(f.calls).toEqual(['a.test']);
    c.advance(1);
    expect(dns.peek('a.test')).toBeUndefined();
    await dns.lookup('a.test');
    expect(f.calls).toEqual(['a.test', 'a.test']);
    expect(dns.stats).toMatchObject({ hits: 1, misses: 2, resolutions: 2 });
  });

  it('clamps TTLs to [minTtlMs, maxTtlMs], uses the smallest record TTL, and defaultTtlMs without one', async () => {
    const c = clock();
    const f = fakeResolver({
      'zero.test': [{ address: '127.0.0.3', family: 4, ttlSeconds: 0 }],
      'huge.test': [{ address: '127.0.0.4', family: 4, ttlSeconds: 86_400 * 30 }],
      'two.test': [
        { address: '127.0.0.5', family: 4, ttlSeconds: 600 },
        { address: '127.0.0.6', family: 4, ttlSeconds: 90 },
      ],
      'bare.test': '127.0.0.7',
    });
    const dns = new DnsCache({ resolver: f.resolver, now: c.now, minTtlMs: 10_000, maxTtlMs: 3_600_000, defaultTtlMs: 300_000 });
    const t = c.now();
    expect((await dns.lookup('zero.test')).expiresAtMs).toBe(t + 10_000);
    expect((await dns.lookup('huge.test')).expiresAtMs).toBe(t + 3_600_000);
    expect((await dns.lookup('two.test')).expiresAtMs).toBe(t + 90_000);
    expect((await dns.lookup('bare.test')).expiresAtMs).toBe(t + 300_000);
  });

  it('caches negative answers (NXDOMAIN) and transient failures for their own TTLs', async () => {
    const c = clock();
    const f = fakeResolver({ 'flaky.test': Object.assign(new Error('queryA ETIMEOUT flaky.test'), { code: 'ETIMEOUT' }) });
    const dns = new DnsCache({ resolver: f.resolver, now: c.now, negativeTtlMs: 300_000, errorTtlMs: 30_000 });
    const missing = await dns.lookup('missing.test');
    expect(missing).toMatchObject({ ok: false, code: 'ENOTFOUND', notFound: true, expiresAtMs: c.now() + 300_000 });
    const flaky = await dns.lookup('flaky.test');
    expect(flaky).toMatchObject({ ok: false, code: 'ETIMEOUT', notFound: false, expiresAtMs: c.now() + 30_000 });
    c.advance(29_999);
    await dns.lookup('missing.test');
    await dns.lookup('flaky.test');
    expect(f.calls).toEqual(['missing.test', 'flaky.test']);
    c.advance(1);
    await dns.lookup('flaky.test');
    await dns.lookup('missing.test');
    expect(f.calls).toEqual(['missing.test', 'flaky.test', 'flaky.test']);
    expect(dns.stats.failures).toBe(3);
  });

  describe('serve-stale (RFC 8767)', () => {
    const timeout = () => Object.assign(new Error('queryA ETIMEOUT a.test'), { code: 'ETIMEOUT' });
    /** A resolver that answers `a.test` until `down` is set, then fails with `failure()`. */
    function flaky(failure: () => Error) {
      const state = { down: false, calls: 0 };
      const resolver: Resolver = async () => {
        state.calls++;
        if (state.down) throw failure();
        return [{ address: '127.0.0.2', family: 4, ttlSeconds: 60 }];
      };
      return { state, resolver };
    }

    it('a transient failure after the answer expired serves the last answer for staleTtlMs, then asks again', async () => {
      const c = clock();
      const f = flaky(timeout);
      const dns = new DnsCache({ resolver: f.resolver, now: c.now, staleTtlMs: 30_000, maxStaleMs: 86_400_000 });
      const fresh = await dns.lookup('a.test');
      expect(fresh.ok && fresh.staleSinceMs).toBeUndefined();
      f.state.down = true;
      c.advance(60_000);
      const stale = await dns.lookup('a.test');
      expect(stale).toMatchObject({ ok: true, addresses: [{ address: '127.0.0.2' }], expiresAtMs: c.now() + 30_000, staleSinceMs: fresh.expiresAtMs });
      expect(dns.stats).toMatchObject({ resolutions: 2, failures: 1, staleServed: 1 });
      // Kept 30 s like an error, then the resolver is asked again (and the stale age keeps counting from the first expiry).
      c.advance(29_999);
      await dns.lookup('a.test');
      expect(f.state.calls).toBe(2);
      c.advance(1);
      expect((await dns.lookup('a.test')).ok && (await dns.lookup('a.test'))).toMatchObject({ staleSinceMs: fresh.expiresAtMs });
      expect(f.state.calls).toBe(3);
      // The resolver back: a fresh answer, no longer marked stale.
      f.state.down = false;
      c.advance(30_000);
      const back = await dns.lookup('a.test');
      expect(back.ok && back.staleSinceMs).toBeUndefined();
      expect(dns.stats.staleServed).toBe(2);
    });

    it('stops after maxStaleMs past the expiry: the failure is the name’s again', async () => {
      const c = clock();
      const f = flaky(timeout);
      const dns = new DnsCache({ resolver: f.resolver, now: c.now, staleTtlMs: 30_000, maxStaleMs: 60_000 });
      const fresh = await dns.lookup('a.test');
      f.state.down = true;
      c.advance(60_000);
      expect((await dns.lookup('a.test')).ok).toBe(true);
      c.advance(30_000);
      expect((await dns.lookup('a.test')).ok).toBe(true); // 30 s past the expiry
      c.advance(30_001);
      expect(c.now() - fresh.expiresAtMs).toBe(60_001);
      expect(await dns.lookup('a.test')).toMatchObject({ ok: false, code: 'ETIMEOUT', notFound: false });
    });

    it('never for "no such name", never for a name the resolver has not answered, never with maxStaleMs 0', async () => {
      const c = clock();
      const gone = flaky(() => Object.assign(new Error('queryA ENOTFOUND a.test'), { code: 'ENOTFOUND' }));
      const dns = new DnsCache({ resolver: gone.resolver, now: c.now });
      await dns.lookup('a.test');
      gone.state.down = true;
      c.advance(60_000);
      expect(await dns.lookup('a.test')).toMatchObject({ ok: false, notFound: true });
      const down = flaky(timeout);
      down.state.down = true;
      const never = new DnsCache({ resolver: down.resolver, now: c.now });
      expect(await never.lookup('a.test')).toMatchObject({ ok: false, code: 'ETIMEOUT' });
      const off = flaky(timeout);
      const noStale = new DnsCache({ resolver: off.resolver, now: c.now, maxStaleMs: 0 });
      await noStale.lookup('a.test');
      off.state.down = true;
      c.advance(60_000);
      expect(await noStale.lookup('a.test')).toMatchObject({ ok: false, code: 'ETIMEOUT' });
      expect(noStale.stats.staleServed).toBe(0);
    });
  });

  it('an empty or unusable answer is a negative answer', async () => {
    const f = fakeResolver({ 'empty.test': [], 'junk.test': ['not-an-ip', { address: 'x', family: 4 }] });
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now });
    expect(await dns.lookup('empty.test')).toMatchObject({ ok: false, notFound: true, code: 'ENODATA' });
    expect(await dns.lookup('junk.test')).toMatchObject({ ok: false, notFound: true });
  });

  it('orders IPv4 before IPv6 and accepts plain strings', async () => {
    const f = fakeResolver({ 'mixed.test': ['::1', '127.0.0.9', { address: '::2', family: 6 }] });
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now });
    const r = await dns.lookup('mixed.test');
    expect(r.ok && r.addresses.map((a) => a.address)).toEqual(['127.0.0.9', '::1', '::2']);
  });

  it('deduplicates resolutions in flight: concurrent lookups and prefetches share one call', async () => {
    const f = fakeResolver({ 'slow.test': '127.0.0.8' });
    const open = f.gate('slow.test');
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now });
    dns.prefetch('slow.test');
    const lookups = Array.from({ length: 10 }, () => dns.lookup('slow.test'));
    dns.prefetch(['slow.test', 'SLOW.test']);
    expect(dns.pending).toBe(1);
    open();
    const results = await Promise.all(lookups);
    expect(new Set(results).size).toBe(1);
    expect(f.calls).toEqual(['slow.test']);
    expect(dns.stats.joined).toBe(12); // ten lookups and two prefetches
  });

  it('prefetch returns at once and warms the cache off the caller’s path', async () => {
    const f = fakeResolver({ 'warm.test': '127.0.0.10' });
    const open = f.gate('warm.test');
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now });
    dns.prefetch('warm.test');
    expect(dns.peek('warm.test')).toBeUndefined();
    open();
    await flush();
    expect(dns.peek('warm.test')).toMatchObject({ ok: true });
    expect(f.calls).toEqual(['warm.test']);
    dns.prefetch('warm.test'); // already cached: no new resolution
    expect(f.calls).toHaveLength(1);
  });

  it('one cache shared by two consumers (partitions) resolves each name once', async () => {
    const f = fakeResolver({ 'shared.test': '127.0.0.11' });
    const shared = new DnsCache({ resolver: f.resolver, now: clock().now });
    const partitionA = { dns: shared };
    const partitionB = { dns: shared };
    const [a, b] = await Promise.all([partitionA.dns.lookup('shared.test'), partitionB.dns.lookup('shared.test')]);
    expect(a).toBe(b);
    await partitionB.dns.lookup('shared.test');
    expect(f.calls).toEqual(['shared.test']);
  });

  it('bounds resolutions in flight with maxConcurrent', async () => {
    const names = ['q1.test', 'q2.test', 'q3.test', 'q4.test', 'q5.test'];
    const f = fakeResolver(Object.fromEntries(names.map((n, i) => [n, `127.0.1.${i + 1}`])));
    const opens = names.map((n) => f.gate(n));
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now, maxConcurrent: 2 });
    dns.prefetch(names);
    await flush();
    expect(f.calls).toEqual(['q1.test', 'q2.test']);
    opens[0]!();
    await flush();
    expect(f.calls).toHaveLength(3);
    for (const o of opens) o();
    await Promise.all(names.map((n) => dns.lookup(n)));
    expect(f.calls).toHaveLength(5);
  });

  it('evicts least recently used names beyond maxEntries', async () => {
    const f = fakeResolver({ 'e1.test': '127.0.2.1', 'e2.test': '127.0.2.2', 'e3.test': '127.0.2.3' });
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now, maxEntries: 2 });
    await dns.lookup('e1.test');
    await dns.lookup('e2.test');
    await dns.lookup('e1.test'); // e1 is now the most recent
    await dns.lookup('e3.test');
    expect(dns.size).toBe(2);
    expect(dns.peek('e1.test')).toBeDefined();
    expect(dns.peek('e2.test')).toBeUndefined();
  });

  it('IP literals answer directly, never reaching the resolver', async () => {
    const f = fakeResolver({});
    const dns = new DnsCache({ resolver: f.resolver, now: clock().now });
    expect(await dns.lookup('127.0.0.1')).toMatchObject({ ok: true, addresses: [{ address: '127.0.0.1', family: 4 }] });
    expect(await dns.lookup('[::1]')).toMatchObject({ ok: true, addresses: [{ address: '::1', family: 6 }] });
    expect(f.calls).toEqual([]);
    expect(dns.size).toBe(0);
  });

  it('rejects bad names and bad options with InvalidArgumentError', () => {
    const dns = new DnsCache({ resolver: fakeResolver({}).resolver });
    expect(() => dns.peek('')).toThrow(InvalidArgumentError);
    expect(() => dns.lookup('a'.repeat(254))).toThrow(InvalidArgumentError);
    expect(() => new DnsCache({ minTtlMs: 10, maxTtlMs: 5 })).toThrow(/maxTtlMs/);
    expect(() => new DnsCache({ maxEntries: 0 })).toThrow(InvalidArgumentError);
    expect(() => new DnsCache({ resolver: 'x' as unknown as Resolver })).toThrow(/resolver/);
  });

  it('systemResolver reports a transient failure from an unreachable (loopback) name server', async () => {
    const resolver = systemResolver({ servers: ['127.0.0.1:9'], timeoutMs: 100, tries: 1 });
    const dns = new DnsCache({ resolver, now: clock().now });
    const r = await dns.lookup('meguri-dns-test.invalid');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.notFound).toBe(false);
  });

  it('lookupResolver (getaddrinfo) resolves localhost from the hosts file', async () => {
    const dns = new DnsCache({ resolver: lookupResolver(), now: clock().now });
    const r = await dns.lookup('localhost');
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.addresses.every((a) => a.address === '127.0.0.1' || a.address === '::1')).toBe(true);
  });
});
