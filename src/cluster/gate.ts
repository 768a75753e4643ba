/**
 * The process-wide send gate per IP, with a Redis gate for IPs other processes fetch from too.
 *
 * Every fetch start to an IP passes here after the slot's frontier dispatched it: the local
 * table spaces this process's starts to the IP (the slots' frontiers each keep their own IP
 * windows, so two slots of one process would not see each other's starts), and when the IP is
 * shared with another node, one `IP_GATE` call on the Redis clock takes the IP's next start or
 * returns the wait. Unshared IPs never pay the round trip.
 *
 * Sharing is learnt by registering (`IP_REGISTER`): a node's "not shared" verdict lasts
 * `verdictMs` from the moment it asked, and a registration that makes an IP shared pushes the
 * Redis gate `verdictMs + interval` ahead, so the node that fetched alone learns of it before
 * anyone passes the gate. If Redis is unreachable, starts to shared IPs (and to IPs whose
 * verdict expired) wait and retry with backoff; `blocked` says so for progress reports.
 */
import type { Redis } from 'ioredis';
import type { ClusterKeys } from './keys.js';
import { IP_GATE, IP_REGISTER } from './scripts.js';

export interface IpGateOptions {
  /** How long a "not shared" verdict holds, ms. */
  readonly verdictMs: number;
  /** The crawl's largest per-IP interval a start may need (guard when an IP becomes shared). */
  readonly maxIntervalMs: number;
  /** Clock, ms. */
  readonly now: () => number;
  /** Sleep for ms (tests may shorten). */
  readonly sleep?: (ms: number) => Promise<void>;
}

interface Verdict {
  shared: boolean;
  askedAt: number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class IpGate {
  private readonly local = new Map<string, number>();
  private readonly verdicts = new Map<string, Verdict>();
  private readonly chains = new Map<string, Promise<void>>();
  /** Round trips to the Redis gate; starts that had to wait on it; failed calls. */
  gateCalls = 0;
  gateWaits = 0;
  failures = 0;
  /** Whether the last attempt to reach Redis for an IP failed (dispatch to shared IPs stopped). */
  blocked = false;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ClusterKeys,
    private readonly nodeId: string,
    private readonly opts: IpGateOptions,
  ) {
    this.sleep = opts.sleep ?? defaultSleep;
  }

  /** IPs this node knows to be shared with another node. */
  sharedIps(): string[] {
    return [...this.verdicts].filter(([, v]) => v.shared).map(([ip]) => ip);
  }

  /**
   * Waits until a start to `ip` at interval `intervalMs` is allowed, takes it, and returns the
   * clock at which it was taken. Starts to one IP from this process are serialized.
   */
  acquire(ip: string, intervalMs: number): Promise<number> {
    const prev = this.chains.get(ip) ?? Promise.resolve();
    const run = prev.then(() => this.take(ip, intervalMs));
    const tail = run.then(
      () => {},
      () => {},
    );
    this.chains.set(ip, tail);
    void tail.then(() => {
      if (this.chains.get(ip) === tail) this.chains.delete(ip);
    });
    return run;
  }

  private async take(ip: string, intervalMs: number): Promise<number> {
    let backoff = 50;
    for (;;) {
      const wait = (this.local.get(ip) ?? -Infinity) - this.opts.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      try {
        if (await this.isShared(ip)) {
          this.gateCalls++;
          const w = Number(await IP_GATE.run(this.redis, [this.keys.ipGate(ip)], [Math.ceil(intervalMs)]));
          this.blocked = false;
          if (w > 0) {
            this.gateWaits++;
            await this.sleep(w);
            continue;
          }
        }
      } catch {
        this.failures++;
        this.blocked = true;
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, 5_000);
        continue;
      }
      const at = this.opts.now();
      this.local.set(ip, at + intervalMs);
      return at;
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
