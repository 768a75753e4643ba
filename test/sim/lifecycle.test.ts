/**
 * Start, close and what they leave behind: listeners on every address, one port, prompt and
 * complete teardown (no TCP handle or timer left), failures that leave nothing open.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { InvalidStateError } from '../../src/errors/index.js';
import { createSimWeb, PLAIN_MIX, type SimRequest } from '../../src/sim/index.js';
import { get, settle } from './helpers.js';

const handles = (type: string): number => process.getActiveResourcesInfo().filter((t) => t === type).length;

const tcpConnects = (ip: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host: ip, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

describe('start and close', () => {
  it('listens on every address with one port, and closes every handle', async () => {
    const servers = handles('TCPServerWrap');
    const sockets = handles('TCPSocketWrap');
    const sim = createSimWeb({ seed: 1, hosts: 6, ips: 3, mix: PLAIN_MIX });
    expect(sim.listening).toBe(false);
    await sim.start();
    expect(sim.listening).toBe(true);
    expect(sim.port).toBeGreaterThan(0);
    expect(handles('TCPServerWrap')).toBe(servers + 3);
    for (const ip of sim.ips) expect(await tcpConnects(ip, sim.port)).toBe(true);
    expect(await tcpConnects('127.0.0.9', sim.port)).toBe(false);
    // Leave a keep-alive connection open on the server side.
    const { Agent } = await import('node:http');
    const agent = new Agent({ keepAlive: true });
    expect((await get(sim, sim.url('h0.sim.test', '/'), { agent })).status).toBe(200);
    await sim.close();
    expect(sim.listening).toBe(false);
    agent.destroy();
    expect(await settle(() => handles('TCPServerWrap') <= servers && handles('TCPSocketWrap') <= sockets)).toBe(true);
    for (const ip of sim.ips) expect(await tcpConnects(ip, sim.port)).toBe(false);
    await sim.close(); // idempotent
  });

  it('close() cuts a delayed response short and leaves no timer behind', async () => {
    const timers = handles('Timeout');
    const sim = createSimWeb({ seed: 2, hosts: 2, mix: { ...PLAIN_MIX, slow: 1, slowMs: 20_000 } });
    await sim.start();
    const pending = get(sim, sim.url('h0.sim.test', '/')).then(
      () => 'answered',
      () => 'cut',
    );
    await settle(() => sim.inFlight('h0.sim.test') === 1);
    expect(sim.inFlight('h0.sim.test')).toBe(1);
    await sim.close();
    expect(await pending).toBe('cut');
    expect(sim.log[0]).toMatchObject({ status: 0, host: 'h0.sim.test' });
    expect(sim.log[0]!.finishedAtMs).toBeDefined();
    expect(sim.inFlight('h0.sim.test')).toBe(0);
    expect(await settle(() => handles('Timeout') <= timers)).toBe(true);
  });

  it('refuses to start twice or after close', async () => {
    const sim = createSimWeb({ seed: 3, hosts: 1, mix: PLAIN_MIX });
    await sim.start();
    await expect(sim.start()).rejects.toThrow(InvalidStateError);
    await sim.close();
    await expect(sim.start()).rejects.toThrow(/closed/);
  });

  it('a port taken on one address fails start() and leaves nothing listening', async () => {
    const first = createSimWeb({ seed: 4, hosts: 2, ips: 2, mix: PLAIN_MIX });
    await first.start();
    try {
      const servers = handles('TCPServerWrap');
      const second = createSimWeb({ seed: 4, hosts: 2, ips: 3, port: first.port, mix: PLAIN_MIX });
      await expect(second.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(second.listening).toBe(false);
      expect(await settle(() => handles('TCPServerWrap') <= servers)).toBe(true);
      // With port 0 a clash is retried on another port.
      const third = createSimWeb({ seed: 4, hosts: 2, ips: 3, mix: PLAIN_MIX });
      await third.start();
      expect(third.port).not.toBe(first.port);
      await third.close();
    } finally {
      await first.close();
    }
  });

  it('reports finished requests to onRequest and tracks concurrency on the server side', async () => {
    const seen: SimRequest[] = [];
    const sim = createSimWeb({ seed: 5, hosts: 2, mix: { ...PLAIN_MIX, slow: 1, slowMs: 50 }, onRequest: (e) => seen.push(e) });
    await sim.start();
    try {
      await Promise.all([get(sim, sim.url('h0.sim.test', '/')), get(sim, sim.url('h0.sim.test', '/robots.txt'))]);
      expect(seen).toHaveLength(2);
      expect(seen.every((e) => e.finishedAtMs !== undefined && e.status === 200)).toBe(true);
      expect(sim.maxInFlight('h0.sim.test')).toBe(2);
      expect(Math.max(...seen.map((e) => e.inFlightAtArrival))).toBe(2);
      expect(sim.inFlight('h0.sim.test')).toBe(0);
      expect(sim.stats()).toMatchObject({ requests: 2, byStatus: { 200: 2 }, byKind: { page: 1, robots: 1 } });
      expect(sim.summary()).toMatch(/2 requests; by status 200:2/);
      sim.clearLog();
      expect(sim.log).toHaveLength(0);
      await get(sim, sim.url('h1.sim.test', '/'));
      expect(sim.log[0]!.seq).toBe(2); // sequence numbers keep counting
    } finally {
      await sim.close();
    }
  });

  it('notices an event-loop stall that hid when a request really arrived', async () => {
    const sim = createSimWeb({ seed: 7, hosts: 1, mix: PLAIN_MIX });
    await sim.start();
    try {
      await get(sim, sim.url('h0.sim.test', '/robots.txt'));
      // A raw connection, so we know exactly when the request bytes are in the kernel.
      const socket = connect({ host: sim.ipOf('h0.sim.test')!, port: sim.port });
      await new Promise<void>((r) => socket.once('connect', () => r()));
      const answered = new Promise<void>((r) => socket.once('data', () => r()));
      socket.write(`GET / HTTP/1.1\r\nHost: h0.sim.test:${sim.port}\r\nConnection: close\r\n\r\n`);
      // Hold the loop: the server can only read the request after this stall.
      const until = performance.now() + 120;
      while (performance.now() < until) {
        // busy
      }
      await answered;
      socket.destroy();
      expect(sim.log[1]!.key).toBe('/');
      expect(sim.log[1]!.arrivalSlackMs).toBeGreaterThanOrEqual(60);
    } finally {
      await sim.close();
    }
  });

  it('runs on an injected simulated clock and an injected monotonic clock', async () => {
    let simMs = Date.UTC(2030, 5, 1);
    let mono = 1_000;
    const sim = createSimWeb({
      seed: 6,
      hosts: 1,
      pagesPerHost: 5,
      epochMs: Date.UTC(2030, 0, 1),
      clock: () => simMs,
      now: () => mono,
      wallClock: () => Date.UTC(2030, 5, 1, 12),
      mix: { ...PLAIN_MIX, changingPages: 1, changeRatesPerHour: [1] },
    });
    await sim.start();
    try {
      const url = sim.url('h0.sim.test', sim.truth.hosts[0]!.pages[1]!);
      const r = await get(sim, url);
      expect(r.headers.date).toBe('Sat, 01 Jun 2030 12:00:00 GMT');
      expect(sim.log[0]).toMatchObject({ arrivedAtMs: 1_000, finishedAtMs: 1_000, simTimeMs: simMs });
      expect(sim.log[0]!.version).toBe(sim.versionAt(url, simMs).version);
      expect(sim.log[0]!.version).toBeGreaterThan(1000); // ~3600 simulated hours at 1 change/hour
      simMs += 3_600_000;
      mono += 5;
      expect(sim.now()).toBe(simMs);
      await get(sim, url);
      expect(sim.log[1]).toMatchObject({ arrivedAtMs: 1_005, version: sim.versionAt(url, simMs).version });
    } finally {
      await sim.close();
    }
  });
});
