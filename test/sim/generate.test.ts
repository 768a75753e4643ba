import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidStateError } from '../../src/errors/index.js';
import { acceleratedClock, createSimWeb, PLAIN_MIX, SimClock, type SimWeb } from '../../src/sim/index.js';

const PORT = 18_123; // never bound here: rendering only needs the number

function fingerprint(sim: SimWeb): string {
  // Site graph, rules, behaviours and every page body at two instants.
  const parts: string[] = [JSON.stringify(sim.truth.hosts), JSON.stringify(sim.truth.trapFamilies), JSON.stringify(sim.truth.soft404Farms)];
  for (const url of sim.pageUrls()) {
    parts.push(sim.snapshot(url, sim.options.epochMs).body, sim.snapshot(url, sim.options.epochMs + 50 * 3_600_000).etag);
  }
  return parts.join('\n');
}

describe('generation', () => {
  it('is deterministic: the same seed and options give the same graph, rules and bodies', () => {
    const a = createSimWeb({ seed: 42, hosts: 15, pagesPerHost: 12, port: PORT });
    const b = createSimWeb({ seed: 42, hosts: 15, pagesPerHost: 12, port: PORT });
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(a.summary()).toBe(b.summary());
  });

  it('spreads hosts over up to 1000 loopback addresses, 250 per /24, and refuses more', () => {
    const sim = createSimWeb({ seed: 3, hosts: 600, pagesPerHost: 2, ips: 600, port: PORT });
    expect(sim.ips).toHaveLength(600);
    expect(sim.ips[0]).toBe('127.0.0.2');
    expect(sim.ips[249]).toBe('127.0.0.251');
    expect(sim.ips[250]).toBe('127.0.1.2');
    expect(sim.ips[599]).toBe('127.0.2.101');
    expect(new Set(sim.ips).size).toBe(600);
    expect(() => createSimWeb({ seed: 3, hosts: 2, ips: 1001, port: PORT })).toThrow(InvalidArgumentError);
  });

  it('a different seed gives a different web', () => {
    const a = createSimWeb({ seed: 1, hosts: 8, pagesPerHost: 10, port: PORT });
    const b = createSimWeb({ seed: 2, hosts: 8, pagesPerHost: 10, port: PORT });
    expect(a.snapshot(a.url('h0.sim.test', '/')).body).not.toBe(b.snapshot(b.url('h0.sim.test', '/')).body);
    expect(JSON.stringify(a.truth.hosts)).not.toBe(JSON.stringify(b.truth.hosts));
  });

  it('bodies are pure: the order pages are asked in changes nothing', () => {
    const opts = { seed: 9, hosts: 6, pagesPerHost: 10, port: PORT, mix: { changingPages: 1, cosmeticPages: 1 } };
    const a = createSimWeb(opts);
    const b = createSimWeb(opts);
    const urls = a.pageUrls();
    const late = a.options.epochMs + 200 * 3_600_000;
    // a: late instant first, then the epoch; b: the other way round and in reverse URL order.
    const fromA = urls.map((u) => [a.snapshot(u, late).body, a.snapshot(u, a.options.epochMs).body]);
    const fromB = [...urls].reverse().map((u) => [b.snapshot(u, b.options.epochMs).body, b.snapshot(u, late).body]).reverse();
    expect(fromA.map(([l, e]) => [e, l])).toEqual(fromB);
  });

  it('names hosts h<i>.<domain> and spreads them over the addresses, several per address', () => {
    const sim = createSimWeb({ seed: 3, hosts: 20, ips: 4, port: PORT });
    expect(sim.truth.hosts.map((h) => h.name)).toEqual(Array.from({ length: 20 }, (_, i) => `h${i}.sim.test`));
    expect(sim.ips).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']);
    const sizes = [...sim.truth.hostsByIp.values()].map((l) => l.length);
    expect(sizes).toEqual([5, 5, 5, 5]);
    for (const [ip, names] of sim.truth.hostsByIp) for (const n of names) expect(sim.ipOf(n)).toBe(ip);
    expect(createSimWeb({ seed: 3, hosts: 3, domain: 'test', port: PORT }).truth.hosts[2]!.name).toBe('h2.test');
    const table = sim.dnsTable();
    expect(Object.keys(table)).toHaveLength(20);
    for (const [name, ip] of Object.entries(table)) expect(sim.ipOf(name)).toBe(ip);
  });

  it('gives every share above zero at least one host, and a plain mix none', () => {
    const sim = createSimWeb({ seed: 5, hosts: 12, pagesPerHost: 12, port: PORT });
    const hosts = sim.truth.hosts;
    for (const mode of ['normal', 'missing', 'error', 'flaky', 'redirect', 'binary', 'huge'] as const) {
      expect(hosts.some((h) => h.robotsMode === mode), mode).toBe(true);
    }
    const f = (k: keyof (typeof hosts)[number]['features']): boolean => hosts.some((h) => Boolean(h.features[k]));
    for (const k of ['slowMs', 'throttled', 'erroring', 'redirects', 'soft404', 'calendarTrap', 'sessionTrap', 'hostile'] as const) {
      expect(f(k), k).toBe(true);
    }
    expect(sim.truth.unresolvable.length).toBeGreaterThan(0);
    const plain = createSimWeb({ seed: 5, hosts: 12, pagesPerHost: 12, port: PORT, mix: PLAIN_MIX });
    expect(plain.truth.hosts.every((h) => h.robotsMode === 'normal' && h.bursts.length === 0 && h.traps.length === 0)).toBe(true);
    expect(plain.truth.pageCount).toBe(12 * 12);
  });

  it('the truth walk reaches every generated page of a host with readable rules', () => {
    const sim = createSimWeb({ seed: 8, hosts: 10, pagesPerHost: 25, port: PORT, mix: { ...PLAIN_MIX, nearDuplicates: 0.2 } });
    for (const h of sim.truth.hosts) {
      expect(h.pages.length, h.name).toBe(25);
      expect(h.pages[0]).toBe('/');
      // Bait is linked and disallowed, never a page.
      expect(h.disallowed.length).toBeGreaterThanOrEqual(4);
      for (const d of h.disallowed) expect(sim.truth.isDisallowed(h.name, d)).toBe(true);
      for (const p of h.pages) expect(sim.truth.isDisallowed(h.name, p)).toBe(false);
    }
    expect(sim.truth.hosts.some((h) => h.nearDuplicates.length > 0)).toBe(true);
  });

  it('a host whose robots.txt answers 5xx forever has no pages and forbids everything', () => {
    const sim = createSimWeb({ seed: 5, hosts: 12, pagesPerHost: 12, port: PORT });
    const dead = sim.truth.hosts.find((h) => h.robotsMode === 'error')!;
    expect(dead.pages).toEqual([]);
    expect(sim.truth.isDisallowed(dead.name, '/')).toBe(true);
    expect(sim.truth.isDisallowed(dead.name, '/robots.txt')).toBe(false);
  });

  it('required intervals follow Crawl-delay and the configured minimum', () => {
    const sim = createSimWeb({ seed: 4, hosts: 10, port: PORT, hostIntervalMs: 300, mix: { ...PLAIN_MIX, crawlDelay: 0.5, crawlDelaySeconds: [0.1, 2] } });
    for (const h of sim.truth.hosts) {
      const delay = h.rules?.crawlDelaySec;
      expect(h.requiredIntervalMs).toBe(Math.max(300, (delay ?? 0) * 1000));
      expect(sim.truth.requiredIntervalMs(h.name)).toBe(h.requiredIntervalMs);
    }
    expect(sim.truth.hosts.filter((h) => h.rules?.crawlDelaySec !== undefined)).toHaveLength(5);
    expect(sim.truth.ipIntervalMs).toBe(50);
  });

  it('rejects bad options with the option named', () => {
    expect(() => createSimWeb({ hosts: 0 })).toThrow(/SimWebOptions\.hosts: expected an integer >= 1 <= 100000, received 0/);
    expect(() => createSimWeb({ seed: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => createSimWeb({ domain: 'Bad_Domain' })).toThrow(/SimWebOptions\.domain/);
    expect(() => createSimWeb({ mix: { slow: 2 } })).toThrow(/SimMix\.slow: expected a finite number >= 0 <= 1, received 2/);
    expect(() => createSimWeb({ mix: { robotsMissing: 0.6, robotsError: 0.6 } })).toThrow(/robots shares .* more than 1/);
    expect(() => createSimWeb({ mix: { retryAfterSeconds: [1.5] } })).toThrow(/whole seconds/);
    expect(() => createSimWeb({ mix: { crawlDelaySeconds: [] } })).toThrow(/crawlDelaySeconds/);
    expect(() => createSimWeb({ nope: 1 } as never)).toThrow(/unknown option "nope"/);
  });

  it('needs a port before writing URLs, and checks what it is asked about', () => {
    const sim = createSimWeb({ seed: 1, hosts: 2 });
    expect(() => sim.url('h0.sim.test', '/')).toThrow(InvalidStateError);
    expect(sim.truth.host('H0.SIM.TEST.')?.name).toBe('h0.sim.test');
    expect(sim.versionAt('http://h0.sim.test/')).toEqual({ version: 0, cosmetic: 0 });
    const withPort = createSimWeb({ seed: 1, hosts: 2, port: PORT });
    expect(() => withPort.url('h9.sim.test', '/')).toThrow(/unknown host "h9.sim.test"/);
    expect(() => withPort.url('h0.sim.test', 'x')).toThrow(/starting with "\/"/);
    expect(() => withPort.snapshot('http://h0.sim.test:1/nope')).toThrow(/not a content page/);
    expect(() => withPort.snapshot('not a url')).toThrow(/absolute URL/);
    expect(() => withPort.snapshot('http://example.com/')).toThrow(/not on a simulated host/);
    expect(() => createSimWeb({ clock: () => 0 }).advance(1)).toThrow(InvalidStateError);
  });

  it('clocks: a manual one that never runs back, an accelerated one for demos', () => {
    const c = new SimClock(1000);
    c.advance(500);
    expect(c.now()).toBe(1500);
    c.set(2000);
    expect(c.now()).toBe(2000);
    expect(() => c.set(1999)).toThrow(/>= the current 2000/);
    expect(() => c.advance(-1)).toThrow(InvalidArgumentError);
    let mono = 50;
    const fast = acceleratedClock(1_000_000, 3600, () => mono);
    expect(fast()).toBe(1_000_000);
    mono += 1000;
    expect(fast()).toBe(1_000_000 + 3_600_000);
    expect(() => acceleratedClock(0, 0, () => 0)).toThrow(/factor > 0/);
    const web = createSimWeb({ seed: 1, hosts: 1, clock: fast, mix: { ...PLAIN_MIX, changingPages: 1, changeRatesPerHour: [1] } });
    expect(web.now()).toBe(fast());
  });
});
