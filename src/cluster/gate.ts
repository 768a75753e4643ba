/**
 * The process-wide send gate per IP, with a Redis gate for IPs other processes fetch from too.
 *
 * What a server sees is when a request's bytes leave, and that can lag its dispatch by a
 * connect and a busy event loop (src/engine/send-gate.ts measured hundreds of ms on a loaded
 * machine). So a start *holds* its IP from `acquire` until the request is seen leaving
 * (`release` with the moment it left), and the next start to the IP may go one interval after
 * that. Locally this serializes the process's starts per IP (each slot's frontier keeps its
 * own IP windows, so two slots of one process would not see each other's starts); when the IP
 * is shared with another node, the hold is also taken on Redis (`IP_TAKE`/`IP_RELEASE`, on the
 * Redis clock: one clock for all machines). Unshared IPs never pay the round trips.
 *
 * Which interval: each caller passes its own current view of the IP's interval (a slot
 * frontier's adaptive per-IP interval, issue 22), and the largest live view wins — locally over
 * the process's slots, on Redis over the nodes (each node reports its local largest with every
 * take). Two slots or two nodes see different outcomes from one machine; the one that saw it
 * push back (429s, a latency rise) is right about the machine, and the spacing is its. A view
 * counts until its source has not started a fetch to the IP for `ipForgetAfterMs` of it (the
 * IP table's own idle-forget horizon); a view that narrowed replaces its source's earlier one.
 * The largest view is evaluated at take time against the moment the last start left, so a rise
 * binds the very next start, wherever it comes from.
 *
 * Sharing is learnt by registering (`IP_REGISTER`, which also records the node's view): a
 * node's "not shared" verdict lasts `verdictMs` from the moment it asked, and a registration
 * that makes an IP shared pushes the Redis gate `verdictMs` + the largest known interval
 * ahead, so the node that fetched alone learns of it before anyone passes the gate. If Redis
 * is unreachable, starts to shared IPs (and to IPs whose verdict expired) wait and retry with
 * backoff, and `blocked` says so for progress reports.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClusterKeys } from './keys.js';
import { ipForgetAfterMs } from '../politeness/ip-table.js';
import { IP_REGISTER, IP_RELEASE, IP_TAKE, IP_VIEW } from './scripts.js';

export interface IpGateOptions {
  /** How long a "not shared" verdict holds, ms. */
  readonly verdictMs: number;
  /** The least interval the guard uses when an IP becomes shared (the crawl's IP floor), ms. */
  readonly maxIntervalMs: number;
  /** Longest a dead holder keeps a shared IP's gate, ms (default 10 000). */
  readonly lockMs?: number;
  /** Clock, ms. */
  readonly now: () => number;
}

/** A held start to one IP; pass it back to `release`. */
export interface IpTicket {
  readonly ip: string;
  /** The interval the start was spaced by: the largest live local view when it was taken. */
  readonly intervalMs: number;
  /** The Redis holder token, when the IP is shared. */
  readonly token: string | undefined;
}

interface Verdict {
  shared: boolean;
  askedAt: number;
}

/** One IP's local state. */
interface IpState {
  /** When the last local start to the IP left (−∞: none yet). */
  lastAt: number;
  /** The tail of the local hold chain. */
  tail: Promise<void>;
  /** Starts waiting in or holding the chain. */
  queued: number;
  /** Views of the IP's interval by source (a slot): the interval and when it was last given. */
  readonly views: Map<string, { iv: number; at: number }>;
}

/** Sweeps never run below this many tracked IPs. */
const MIN_SWEEP = 1_024;

/** The largest live view of `st` at `now` (dropping dead ones); 0 without any. */
function largestView(st: IpState, now: number): number {
  let eff = 0;
  for (const [source, v] of st.views) {
    if (now - v.at > ipForgetAfterMs(v.iv)) st.views.delete(source);
    else if (v.iv > eff) eff = v.iv;
  }
  return eff;
}

/**
 * An interval as every gate script takes it: whole ms, and the horizon a report of it counts for
 * (`ipForgetAfterMs`), which the scripts use in PEXPIRE. The one place the rounding is done: a
 * widened interval is fractional (×1.25 soft steps), and Redis refuses a fractional PEXPIRE —
 * after a script's writes, so the call "fails" and is retried for ever (a release left this
 * node's next start to the IP waiting behind it).
 */
function scriptView(intervalMs: number): [iv: number, keepMs: number] {
  const iv = Math.ceil(intervalMs);
  return [iv, ipForgetAfterMs(iv)];
}

export class IpGate {
  private readonly local = new Map<string, IpState>();
  private readonly holds = new Map<IpTicket, () => void>();
  private readonly verdicts = new Map<string, Verdict>();
  private readonly prefix = randomBytes(4).toString('hex');
  private seq = 0;
  private sweepAt = MIN_SWEEP;
  /** Takes through the Redis gate; takes that had to wait there; failed Redis calls. */
  gateCalls = 0;
  gateWaits = 0;
  failures = 0;
  /** Whether the last attempt to reach Redis for an IP failed (dispatch to shared IPs stopped). */
  blocked = false;
  /** Aborted by `close`: every wait here ends, and no start is granted any more. */
  private readonly closing = new AbortController();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    private readonly opts: IpGateOptions,
  ) {}

  /**
   * The node is leaving (its Redis connection about to close): starts waiting here, or asked
   * for later, fail at once instead of retrying against a closed connection — a start left
   * waiting retried with backoff for ever and kept the process from exiting. A hold on the
   * Redis gate still out expires there after `lockMs`.
   */
  close(): void {
    this.closing.abort();
  }

  /** Resolves after `ms`, or at once when the gate closes. */
  private pause(ms: number): Promise<void> {
    const signal = this.closing.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** IPs this node knows to be shared with another node. */
  sharedIps(): string[] {
    return [...this.verdicts].filter(([, v]) => v.shared).map(([ip]) => ip);
  }

  /** This process's current interval for `ip`: the largest live view of its sources (0 when none). */
  intervalOf(ip: string): number {
    const st = this.local.get(ip);
    return st === undefined ? 0 : largestView(st, this.opts.now());
  }

  /**
   * Waits for, and holds, the next start to `ip`. Hold it only until the request leaves.
   * `intervalMs` is the caller's current view of the IP's interval and `source` names whose
   * view it is (a slot): the start is spaced by the largest live view of every source here
   * and, for a shared IP, of every node.
   */
  async acquire(ip: string, intervalMs: number, source = ''): Promise<IpTicket> {
    let st = this.local.get(ip);
    if (st === undefined) {
      this.local.set(ip, (st = { lastAt: -Infinity, tail: Promise.resolve(), queued: 0, views: new Map() }));
      if (this.local.size > this.sweepAt) this.sweep();
    }
    st.views.set(source, { iv: intervalMs, at: this.opts.now() });
    st.queued++;
    const prev = st.tail;
    let free!: () => void;
    st.tail = new Promise<void>((r) => (free = r));
    await prev;
    const done = (): void => {
      st.queued--;
      free();
    };
    try {
      const { token, eff } = await this.take(ip, st);
      const ticket: IpTicket = { ip, intervalMs: eff, token };
      this.holds.set(ticket, done);
      return ticket;
    } catch (err) {
      done();
      throw err;
    }
  }

  /**
   * `source`'s view of `ip`'s interval changed between its starts (its frontier widened or
   * narrowed the IP on an outcome). Locally the next start is spaced by it at once; when it
   * raises this process's largest view of a shared IP, it is also written to the Redis gate
   * (one call, off the caller's path), so the other nodes' next starts are too. Falls are
   * left to the next take (a stale larger view only errs on the polite side).
   */
  note(ip: string, intervalMs: number, source = ''): void {
    const st = this.local.get(ip);
    if (st === undefined) return; // never started here: the first acquire brings the view
    const now = this.opts.now();
    const before = largestView(st, now);
    st.views.set(source, { iv: intervalMs, at: now });
    if (intervalMs <= before) return;
    const v = this.verdicts.get(ip);
    if (v === undefined || !v.shared || now - v.askedAt >= this.opts.verdictMs) return;
    IP_VIEW.run(this.redis, [this.keys.ipGate(ip)], ['', 0, this.nodeId, ...scriptView(intervalMs)]).then(
      () => {},
      () => {
        this.failures++; // the next take carries the view anyway
      },
    );
  }

  /** The held request left at `sentAtMs` (or ended without leaving): the IP's next start may go one interval later. */
  release(ticket: IpTicket, sentAtMs: number): void {
    const free = this.holds.get(ticket);
    if (free === undefined) return;
    this.holds.delete(ticket);
    const st = this.local.get(ticket.ip)!;
    st.lastAt = Math.max(st.lastAt, sentAtMs);
    if (ticket.token === undefined) {
      free();
      return;
    }
    // The next local start waits for the Redis release too, or it could take the gate before it.
    void this.releaseRemote(ticket).finally(free);
  }

  /** Drops the state of IPs nothing waits on whose last start and views are past forgetting. */
  private sweep(): void {
    const now = this.opts.now();
    for (const [ip, st] of this.local) {
      if (st.queued === 0 && largestView(st, now) === 0 && now - st.lastAt > ipForgetAfterMs(0)) this.local.delete(ip);
    }
    for (const [ip, v] of this.verdicts) if (now - v.askedAt >= this.opts.verdictMs && !this.local.has(ip)) this.verdicts.delete(ip);
    this.sweepAt = Math.max(MIN_SWEEP, 2 * this.local.size);
  }

  private async releaseRemote(t: IpTicket): Promise<void> {
    for (let backoff = 50; !this.closing.signal.aborted; backoff = Math.min(backoff * 2, 5_000)) {
      try {
        await IP_RELEASE.run(this.redis, [this.keys.ipGate(t.ip)], [t.token!, ...scriptView(t.intervalMs)]);
        return;
      } catch {
        this.failures++;
        this.blocked = true;
        await this.pause(backoff);
      }
    }
  }

  /** Waits out the local spacing, then (for a shared IP) takes the Redis gate; `eff` is the interval the start is spaced by. */
  private async take(ip: string, st: IpState): Promise<{ token: string | undefined; eff: number }> {
    let backoff = 50;
    for (;;) {
      if (this.closing.signal.aborted) throw new Error('IP gate closed: the node is leaving');
      const now = this.opts.now();
      // Re-read on every turn: a view may rise while this start waits.
      const eff = largestView(st, now);
      const wait = st.lastAt + eff - now;
      if (wait > 0) {
        await this.pause(wait);
        continue;
      }
      try {
        if (!(await this.isShared(ip, eff))) return { token: undefined, eff };
        const token = `${this.prefix}-${++this.seq}`;
        this.gateCalls++;
        const w = Number(await IP_TAKE.run(this.redis, [this.keys.ipGate(ip)], [token, this.opts.lockMs ?? 10_000, this.nodeId, ...scriptView(eff)]));
        this.blocked = false;
        if (w === 0) return { token, eff };
        this.gateWaits++;
        await this.pause(w);
      } catch {
        this.failures++;
        this.blocked = true;
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  }

  private async isShared(ip: string, eff: number): Promise<boolean> {
    const now = this.opts.now();
    const v = this.verdicts.get(ip);
    if (v !== undefined && now - v.askedAt < this.opts.verdictMs) return v.shared;
    const [iv, keepMs] = scriptView(eff);
    const n = Number(
      await IP_REGISTER.run(
        this.redis,
        [this.keys.ipUsers(ip), this.keys.ipGate(ip)],
        [Math.max(this.opts.verdictMs * 2, keepMs), this.opts.maxIntervalMs, this.nodeId, iv, keepMs, this.opts.verdictMs],
      ),
    );
    this.verdicts.set(ip, { shared: n > 1, askedAt: now });
    return n > 1;
  }
}
