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
 * Sharing is learnt by registering (`IP_REGISTER`): a node's "not shared" verdict lasts
 * `verdictMs` from the moment it asked, and a registration that makes an IP shared pushes the
 * Redis gate `verdictMs + interval` ahead, so the node that fetched alone learns of it before
 * anyone passes the gate. If Redis is unreachable, starts to shared IPs (and to IPs whose
 * verdict expired) wait and retry with backoff, and `blocked` says so for progress reports.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClusterKeys } from './keys.js';
import { IP_REGISTER, IP_RELEASE, IP_TAKE } from './scripts.js';

export interface IpGateOptions {
  /** How long a "not shared" verdict holds, ms. */
  readonly verdictMs: number;
  /** The crawl's largest per-IP interval a start may need (guard when an IP becomes shared). */
  readonly maxIntervalMs: number;
  /** Longest a dead holder keeps a shared IP's gate, ms (default 10 000). */
  readonly lockMs?: number;
  /** Clock, ms. */
  readonly now: () => number;
}

/** A held start to one IP; pass it back to `release`. */
export interface IpTicket {
  readonly ip: string;
  readonly intervalMs: number;
  /** The Redis holder token, when the IP is shared. */
  readonly token: string | undefined;
}

interface Verdict {
  shared: boolean;
  askedAt: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class IpGate {
  /** Per IP: when the next local start may go, and the tail of the local hold chain. */
  private readonly local = new Map<string, { nextAt: number; tail: Promise<void> }>();
  private readonly holds = new Map<IpTicket, () => void>();
  private readonly verdicts = new Map<string, Verdict>();
  private readonly prefix = randomBytes(4).toString('hex');
  private seq = 0;
  /** Takes through the Redis gate; takes that had to wait there; failed Redis calls. */
  gateCalls = 0;
  gateWaits = 0;
  failures = 0;
  /** Whether the last attempt to reach Redis for an IP failed (dispatch to shared IPs stopped). */
  blocked = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    private readonly opts: IpGateOptions,
  ) {}

  /** IPs this node knows to be shared with another node. */
  sharedIps(): string[] {
    return [...this.verdicts].filter(([, v]) => v.shared).map(([ip]) => ip);
  }

  /** Waits for, and holds, the next start to `ip`. Hold it only until the request leaves. */
  async acquire(ip: string, intervalMs: number): Promise<IpTicket> {
    let st = this.local.get(ip);
    if (st === undefined) this.local.set(ip, (st = { nextAt: -Infinity, tail: Promise.resolve() }));
    const prev = st.tail;
    let free!: () => void;
    st.tail = new Promise<void>((r) => (free = r));
    await prev;
    try {
      const token = await this.take(ip, intervalMs, st);
      const ticket: IpTicket = { ip, intervalMs, token };
      this.holds.set(ticket, free);
      return ticket;
    } catch (err) {
      free();
      throw err;
    }
  }

  /** The held request left at `sentAtMs` (or ended without leaving): the IP's next start may go one interval later. */
  release(ticket: IpTicket, sentAtMs: number): void {
    const free = this.holds.get(ticket);
    if (free === undefined) return;
    this.holds.delete(ticket);
    const st = this.local.get(ticket.ip)!;
    st.nextAt = Math.max(st.nextAt, sentAtMs + ticket.intervalMs);
    if (ticket.token === undefined) {
      free();
      return;
    }
    // The next local start waits for the Redis release too, or it could take the gate before it.
    void this.releaseRemote(ticket).finally(free);
  }

  private async releaseRemote(t: IpTicket): Promise<void> {
    for (let backoff = 50; ; backoff = Math.min(backoff * 2, 5_000)) {
      try {
        await IP_RELEASE.run(this.redis, [this.keys.ipGate(t.ip)], [t.token!, Math.ceil(t.intervalMs)]);
        return;
      } catch {
        this.failures++;
        this.blocked = true;
        await sleep(backoff);
      }
    }
  }

  private async take(ip: string, intervalMs: number, st: { nextAt: number }): Promise<string | undefined> {
    let backoff = 50;
    for (;;) {
      const wait = st.nextAt - this.opts.now();
      if (wait > 0) {
        await sleep(wait);
        continue;
      }
      try {
        if (!(await this.isShared(ip))) return undefined;
        const token = `${this.prefix}-${++this.seq}`;
        this.gateCalls++;
        const w = Number(await IP_TAKE.run(this.redis, [this.keys.ipGate(ip)], [token, this.opts.lockMs ?? 10_000]));
        this.blocked = false;
        if (w === 0) return token;
        this.gateWaits++;
        await sleep(w);
      } catch {
        this.failures++;
        this.blocked = true;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  }

  private async isShared(ip: string): Promise<boolean> {
    const now = this.opts.now();
    const v = this.verdicts.get(ip);
    if (v !== undefined && now - v.askedAt < this.opts.verdictMs) return v.shared;
    const n = Number(
      await IP_REGISTER.run(this.redis, [this.keys.ipUsers(ip), this.keys.ipGate(ip)], [this.nodeId, this.opts.verdictMs * 2, this.opts.verdictMs + this.opts.maxIntervalMs]),
    );
    this.verdicts.set(ip, { shared: n > 1, askedAt: now });
    return n > 1;
  }
}
