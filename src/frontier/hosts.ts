/**
 * Host records: one object per host group (hosts ≪ URLs, DESIGN §4), holding the host's
 * live politeness state, admission budget and scheduler state.
 *
 * Durable fields round-trip through the `.meguri` hosts section (`toImage`/`fromImage`);
 * `state` and `inFlightRow` are derived on recovery (an in-flight URL is re-queued).
 */
import type { HostImage } from '../format/index.js';

/** Where a host is in the scheduler. */
export const HostState = {
  /** No pending URL and no back queue. */
  Idle: 0,
  /** Pending URLs, no back queue: waits in the front bank. */
  Front: 1,
  /** Holds a back queue; parked in the host heap until its host and IP windows open. */
  Parked: 2,
  /** Holds a back queue and may dispatch now: in the ready bank. */
  Ready: 3,
  /** Holds a back queue and has one URL in flight. */
  InFlight: 4,
} as const;
export type HostState = (typeof HostState)[keyof typeof HostState];

/** Scheduler bits persisted in `HostImage.sched`. */
const SCHED_ACTIVE = 1;

/** One host group's record. */
export class HostRecord {
  state: HostState = HostState.Idle;
  /** Row in flight, or −1. */
  inFlightRow = -1;
  /** Resolved IP ('' = none / unknown). */
  ip = '';
  flags = 0;
  crawlDelayMs = 0;
  /** Adaptive start-to-start interval (ms), already clamped. */
  intervalMs: number;
  nextEligibleMs = 0;
  lastDispatchMs = -1;
  /** Smoothed latency (ms), 0 = none yet. */
  latencyMs = 0;
  /** Admission: max URLs admitted (0 = unlimited). */
  urlBudget = 0;
  /** Admission: max depth (0 = unlimited). */
  depthCap = 0;
  /** URLs admitted as Scheduled so far. */
  admitted = 0;
  /** Imported host quality score. */
  hostScore = 0;
  activatedAtMs = 0;
  /** When the host last entered the front bank (ms), for age promotion. */
  waitingSinceMs = 0;
  /** Time and host interval of the host's last per-IP spend (replayed on recovery). */
  ipSpendMs = -1;
  ipSpendIntervalMs = 0;
  /** Dispatches since the host last took a back queue. */
  servedSinceActivation = 0;
  /** Consecutive reports that left the interval pinned at the ceiling. */
  ceilingStreak = 0;

  constructor(
    /** Dense id within the frontier. */
    readonly id: number,
    readonly hostKeyLo: number,
    readonly hostKeyHi: number,
    readonly name: string,
    intervalMs: number,
  ) {
    this.intervalMs = intervalMs;
  }

  /** Whether the host holds a back queue. */
  get active(): boolean {
    return this.state >= HostState.Parked;
  }

  /** The durable form. */
  toImage(): HostImage {
    return {
      hostKeyLo: this.hostKeyLo,
      hostKeyHi: this.hostKeyHi,
      name: this.name,
      ip: this.ip,
      flags: this.flags,
      sched: this.active ? SCHED_ACTIVE : 0,
      crawlDelayMs: this.crawlDelayMs,
      intervalMs: this.intervalMs,
      nextEligibleMs: this.nextEligibleMs,
      lastDispatchMs: this.lastDispatchMs,
      latencyMs: this.latencyMs,
      urlBudget: this.urlBudget,
      depthCap: this.depthCap,
      admitted: this.admitted,
      hostScore: this.hostScore,
      activatedAtMs: this.activatedAtMs,
      waitingSinceMs: this.waitingSinceMs,
      ipSpendMs: this.ipSpendMs,
      ipSpendIntervalMs: this.ipSpendIntervalMs,
      servedSinceActivation: this.servedSinceActivation,
      ceilingStreak: this.ceilingStreak,
    };
  }

  /** Rebuilds a record from its durable form; returns it with `wasActive` for the scheduler. */
  static fromImage(id: number, h: HostImage): { host: HostRecord; wasActive: boolean } {
    const r = new HostRecord(id, h.hostKeyLo, h.hostKeyHi, h.name, h.intervalMs);
    r.ip = h.ip;
    r.flags = h.flags;
    r.crawlDelayMs = h.crawlDelayMs;
    r.nextEligibleMs = h.nextEligibleMs;
    r.lastDispatchMs = h.lastDispatchMs;
    r.latencyMs = h.latencyMs;
    r.urlBudget = h.urlBudget;
    r.depthCap = h.depthCap;
    r.admitted = h.admitted;
    r.hostScore = h.hostScore;
    r.activatedAtMs = h.activatedAtMs;
    r.waitingSinceMs = h.waitingSinceMs;
    r.ipSpendMs = h.ipSpendMs;
    r.ipSpendIntervalMs = h.ipSpendIntervalMs;
    r.servedSinceActivation = h.servedSinceActivation;
    r.ceilingStreak = h.ceilingStreak;
    return { host: r, wasActive: (h.sched & SCHED_ACTIVE) !== 0 };
  }
}

/** Whether host `a` sorts before host `b` by HostKey (unsigned, high lane first). */
export function hostKeyBefore(a: HostRecord, b: HostRecord): boolean {
  return a.hostKeyHi !== b.hostKeyHi ? a.hostKeyHi < b.hostKeyHi : a.hostKeyLo < b.hostKeyLo;
}
