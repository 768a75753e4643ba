/**
 * The host banks: where each host waits, and the only code that changes a host's scheduler
 * state (DESIGN §9).
 *
 * ```
 *            enqueue (first row)           refill (active < target)
 *   Idle ─────────────────────────► Front ───────────────────────────► Parked
 *    ▲                               ▲  front bank + aging heap          │ host heap, keyed by
 *    │ no work left                  │                                   │ max(host, IP) window
 *    └──────────── deactivate ───────┴─── (yield to an aged host) ◄──┐   ▼ surface at now
 *                                                                   │ Ready ── ready bank shard
 *                                                     report ◄── InFlight ◄── launch
 * ```
 *
 * Every move is a function here: `enqueue`/`hostGainedWork` (Idle → Front, or re-position),
 * `activate`/`refill` (Front → Parked), `park`/`parkUntil`, `surface` (Parked → Ready),
 * `toReady`, `markInFlight` (Ready → InFlight), `afterReport` and `deactivate` (→ Parked,
 * Front or Idle), `takeForReplay`, `recordStart`, `wake` and `restoreBanks`. Each heap copies
 * a host's key when it enters or is updated (heap.ts), so whatever changes a key (a host's
 * best row, its eligibility) is followed here by an `update` of the heap holding it.
 */
import { type HostRecord, HostState } from './hosts.js';
import type { HostHeap } from './heap.js';
import { type FrontierState, HOUR_MS } from './state.js';

/** Makes room for host `h` in the dense per-host arrays and the row queues. */
export function registerHost(s: FrontierState, h: HostRecord): void {
  const id = h.id;
  if (id >= s.parkedAt.length) {
    const cap = s.parkedAt.length * 2;
    const lanes = new Uint32Array(cap * 2);
    lanes.set(s.hostLanes);
    s.hostLanes = lanes;
    const parked = new Float64Array(cap);
    parked.set(s.parkedAt);
    s.parkedAt = parked;
  }
  s.hostLanes[id * 2] = h.hostKeyLo;
  s.hostLanes[id * 2 + 1] = h.hostKeyHi;
  s.queues.ensureHost(id);
}

/** Queues `row` on its host and re-positions the host. */
export function enqueue(s: FrontierState, row: number): void {
  const host = s.table.host[row]!;
  const best = s.queues.peek(host);
  s.queues.push(row);
  // The banks order hosts by their best row: only a new best (or a first row) moves the host.
  if (best < 0 || s.queues.peek(host) !== best) hostGainedWork(s, s.hosts[host]!);
}

/** Puts `h` in the front bank (and the aging heap when dispatch threads are on), waiting since `nowMs`. */
function toFront(s: FrontierState, h: HostRecord, nowMs: number): void {
  h.state = HostState.Front;
  h.waitingSinceMs = nowMs;
  s.frontBank.push(h.id);
  if (s.opts.dispatchThreads > 0) s.aging.push(h.id);
}

/** The host's queue changed (push or priority change): fix its position in the banks. */
export function hostGainedWork(s: FrontierState, h: HostRecord): void {
  switch (h.state) {
    case HostState.Idle:
      toFront(s, h, s.clockMs);
      break;
    case HostState.Front:
      s.frontBank.update(h.id);
      break;
    case HostState.Ready:
      s.ready[shardOf(s, h.id)]!.update(h.id);
      break;
    default:
      break;
  }
}

/** Re-derives `row`'s priority from the prioritizer and re-positions it (and its host). */
export function reprioritize(s: FrontierState, row: number): void {
  const prio = s.prio;
  if (!prio) return;
  const t = s.table;
  const h = s.hosts[t.host[row]!]!;
  const p = prio.priority(row, h.id, h.hostScore);
  if (Math.fround(p) === t.priority[row]) return;
  t.priority[row] = p;
  if (s.queues.queued(row)) {
    s.queues.update(row);
    hostGainedWork(s, h);
  }
}

/** The ready-bank shard of host `id`: its HostKey low lane modulo the shard count. */
export function shardOf(s: FrontierState, id: number): number {
  // The dense lane copy, not the record's `hostKeyLo`: a u32 above 2^31 is a boxed double
  // there, and the transfer in `surface` does not touch the record at all.
  return s.hostLanes[id * 2]! % s.ready.length;
}

/** The host's IP, resolved through the DNS seam on first need ('' when unknown). */
export function ipOf(s: FrontierState, h: HostRecord): string {
  if (s.resolver && h.ip === '') {
    const ip = s.resolver.lookup(h.name);
    if (ip !== undefined && ip !== '') h.ip = ip;
  }
  return h.ip;
}

/**
 * The address `url` (the host's next URL) is fetched from, when the resolver answers per URL
 * (`HostResolver.lookupUrl`): it becomes the host's `ip`, so the dispatch is checked against,
 * spends and counts in flight on the machine the request goes to. Under registrable grouping
 * a group's hostnames may sit on different machines; its first origin's address took them all
 * before, and 503s from `img.` (127.0.0.3) widened `www.` (127.0.0.2) 100 → 200 → 400 ms
 * while 127.0.0.3 stayed at its floor (audit e12). A string compare per dispatch; the
 * address's slot is looked up again only when the address changes.
 */
export function urlAddress(s: FrontierState, h: HostRecord, url: string): void {
  const ip = s.resolver!.lookupUrl!(url, h.name) ?? '';
  if (ip !== h.ip) h.ip = ip;
}

/** The slot of the host's address in `s.ips` (−1 = none), looked up once per address change. */
export function ipSlotOf(s: FrontierState, h: HostRecord): number {
  const slot = h.ipSlot;
  return slot !== -2 ? slot : (h.ipSlot = s.ips.slotOf(h.ip));
}

/** When the host's own and its address's windows are both open, and its rate cap allows a start (ms). */
export function windowsOpenAt(s: FrontierState, h: HostRecord): number {
  const own = h.nextEligibleMs;
  const ip = s.ips.eligibleAtSlot(ipSlotOf(s, h));
  const at = ip > own ? ip : own;
  const cap = h.cap;
  if (cap === undefined) return at;
  const capAt = cap.openAt();
  return capAt > at ? capAt : at;
}

/**
 * The host's rate cap changed (`Frontier.setHostCap`): a ready host the new cap closes goes
 * back to wait, a parked one is re-keyed to its new opening (earlier or later).
 */
export function capChanged(s: FrontierState, h: HostRecord): void {
  if (h.state === HostState.Ready) {
    if (windowsOpenAt(s, h) <= s.clockMs) return;
    s.ready[shardOf(s, h.id)]!.remove(h.id);
    park(s, h);
  } else if (h.state === HostState.Parked && s.parkedAt[h.id] !== Infinity) {
    s.parkedAt[h.id] = windowsOpenAt(s, h);
    s.hostHeap.update(h.id);
  }
}

/** Parks `h` in the host heap until its own and its IP's windows open. */
export function park(s: FrontierState, h: HostRecord): void {
  ipOf(s, h);
  h.state = HostState.Parked;
  s.parkedAt[h.id] = windowsOpenAt(s, h);
  s.hostHeap.push(h.id);
}

/** Parks `h` in the host heap under an explicit eligibility time `atMs`. */
export function parkUntil(s: FrontierState, h: HostRecord, atMs: number): void {
  h.state = HostState.Parked;
  s.parkedAt[h.id] = atMs;
  s.hostHeap.push(h.id);
}

function activate(s: FrontierState, h: HostRecord, nowMs: number): void {
  s.frontBank.remove(h.id);
  s.aging.remove(h.id);
  s.active++;
  h.activatedAtMs = nowMs;
  h.servedSinceActivation = 0;
  s.resolver?.prefetch?.(h.name);
  park(s, h);
}

/** `h` gives up its back queue: back to the front bank when it has work, else Idle. */
export function deactivate(s: FrontierState, h: HostRecord, nowMs: number): void {
  s.hostHeap.remove(h.id);
  s.ready[shardOf(s, h.id)]!.remove(h.id);
  s.active--;
  s.spill?.topUp(h.id);
  if (s.queues.size(h.id) > 0) toFront(s, h, nowMs);
  else h.state = HostState.Idle;
}

/** Whether some front-bank host has waited past the promotion age at `nowMs`. */
export function agedWaiting(s: FrontierState, nowMs: number): boolean {
  const top = s.aging.peek();
  return top >= 0 && s.hosts[top]!.waitingSinceMs + s.opts.promoteAgeMs <= nowMs;
}

/** Activates front-bank hosts (aged first) while the active set is below target. */
export function refill(s: FrontierState, nowMs: number): void {
  const target = s.effectiveTarget;
  while (s.frontBank.size > 0 && (target === 0 || s.active < target)) {
    const id = agedWaiting(s, nowMs) ? s.aging.peek() : s.frontBank.peek();
    activate(s, s.hosts[id]!, nowMs);
  }
}

/** Moves every parked host whose windows are open at `nowMs` into its ready-bank shard. */
export function surface(s: FrontierState, nowMs: number): void {
  const heap = s.hostHeap;
  if (s.surfaced.length < heap.size) s.surfaced = new Int32Array(Math.max(heap.size, s.surfaced.length * 2));
  const surfaced = s.surfaced;
  const n = heap.popUpTo(nowMs, surfaced);
  // Two passes: the first touches only the host records (a likely cache miss each, which a
  // short loop body lets overlap), the second only the ready banks.
  let ready = 0;
  for (let i = 0; i < n; i++) {
    const id = surfaced[i]!;
    const h = s.hosts[id]!;
    const trueAt = windowsOpenAt(s, h);
    if (trueAt > nowMs) {
      s.parkedAt[id] = trueAt;
      heap.push(id);
      continue;
    }
    h.state = HostState.Ready;
    surfaced[ready++] = id;
  }
  for (let i = 0; i < ready; i++) {
    const id = surfaced[i]!;
    s.ready[shardOf(s, id)]!.push(id);
  }
}

/** The ready bank to draw from: the shard's own, else the sibling with the best head. */
export function pickBank(s: FrontierState, shard: number): HostHeap | undefined {
  const own = s.ready[shard]!;
  if (own.size > 0) return own;
  let best: HostHeap | undefined;
  for (const b of s.ready) {
    if (b.size === 0) continue;
    if (best === undefined || s.queues.better(s.queues.peek(b.peek()), s.queues.peek(best.peek()))) best = b;
  }
  return best;
}

/** Back into its ready shard (a disallowed row was dropped and the host still has work). */
export function toReady(s: FrontierState, h: HostRecord): void {
  h.state = HostState.Ready;
  s.ready[shardOf(s, h.id)]!.push(h.id);
}

/** `h` has `row` in flight from `nowMs`: its windows are spent. */
export function markInFlight(s: FrontierState, h: HostRecord, row: number, nowMs: number): void {
  h.state = HostState.InFlight;
  h.inFlightRow = row;
  s.inFlight++;
  s.dispatches++;
  spendWindows(s, h, nowMs);
  const slot = ipSlotOf(s, h);
  s.ips.beginSlot(slot);
  h.flightSlot = slot;
  h.servedSinceActivation++;
}

/**
 * A fetch start to `h` at `nowMs`: the host's window (its own interval) and its IP's window
 * (the address's own interval) are spent, and the start counts against its rate cap (as the
 * open start a `recordStart` of the same request moves).
 */
export function spendWindows(s: FrontierState, h: HostRecord, nowMs: number): void {
  h.lastDispatchMs = nowMs;
  h.cap?.recordDispatch(nowMs);
  const interval = h.intervalMs;
  h.nextEligibleMs = nowMs + interval;
  if (h.ip !== '') {
    s.ips.spendSlot(ipSlotOf(s, h), nowMs);
    h.ipSpendMs = nowMs;
    h.ipSpendIntervalMs = interval;
  }
}

/** The fetch of `h` was answered: no longer in flight (before the outcome is applied). */
export function landed(s: FrontierState, h: HostRecord): void {
  h.inFlightRow = -1;
  h.inFlightUrl = undefined;
  s.inFlight--;
  const slot = h.flightSlot;
  h.flightSlot = -1;
  if (s.ips.endSlot(slot)) wakeIpWaiters(s, slot);
}

/** Holds `h` until a fetch to its address (`slot`, at `ipMaxInFlight`) is answered. */
export function holdForIp(s: FrontierState, h: HostRecord, slot: number): void {
  parkUntil(s, h, Infinity);
  const list = s.ipWaiters.get(slot);
  if (list === undefined) s.ipWaiters.set(slot, [h.id]);
  else list.push(h.id);
}

/** The address in `slot` has a free slot again: every host held for it waits for its windows only. */
function wakeIpWaiters(s: FrontierState, slot: number): void {
  const list = s.ipWaiters.get(slot);
  if (list === undefined) return;
  s.ipWaiters.delete(slot);
  for (const id of list) {
    const h = s.hosts[id]!;
    if (h.state !== HostState.Parked || s.parkedAt[id] !== Infinity) continue;
    s.parkedAt[id] = windowsOpenAt(s, h);
    s.hostHeap.update(id);
  }
}

/** Re-places a host after its outcome: yield to an aged front-bank host, park, or give up the slot. */
export function afterReport(s: FrontierState, h: HostRecord, nowMs: number): void {
  if (s.opts.dispatchThreads > 0 && h.servedSinceActivation >= s.opts.rotationQuantum && agedWaiting(s, nowMs)) {
    deactivate(s, h, nowMs);
  } else if (s.queues.size(h.id) > 0) {
    park(s, h);
  } else {
    deactivate(s, h, nowMs);
  }
}

/**
 * Takes `h` out of whatever bank holds it so one of its queued rows can be launched as if
 * dispatched at `atMs` (crash replay). False when the host is Idle or has a fetch in flight.
 */
export function takeForReplay(s: FrontierState, h: HostRecord, atMs: number): boolean {
  switch (h.state) {
    case HostState.Front:
      s.frontBank.remove(h.id);
      s.aging.remove(h.id);
      s.active++;
      h.activatedAtMs = atMs;
      h.servedSinceActivation = 0;
      return true;
    case HostState.Parked:
      s.hostHeap.remove(h.id);
      return true;
    case HostState.Ready:
      s.ready[shardOf(s, h.id)]!.remove(h.id);
      return true;
    default:
      return false; // Idle holds no queued row; InFlight has a fetch out
  }
}

/** `Frontier.recordStart` on a known host (see there). */
export function recordStart(s: FrontierState, h: HostRecord, ip: string | undefined, atMs: number, dispatched: boolean): void {
  if (h.ip === '' && typeof ip === 'string') h.ip = ip;
  if (atMs > h.lastDispatchMs) h.lastDispatchMs = atMs;
  if (dispatched) h.cap?.confirm(atMs);
  else h.cap?.record(atMs);
  // The address the request went to: a sibling hostname's under registrable grouping may not
  // be the one the host's `ip` names now.
  holdWindows(s, h, atMs, typeof ip === 'string' && ip !== '' && ip !== h.ip ? s.ips.slotOf(ip) : -2);
}

/**
 * `Frontier.holdEveryHost` (see there): each host's and address's windows spent at `atMs`, as
 * by a start then, but no start recorded (no rate-cap slot spent, no dispatch time), and hosts
 * first seen later held the same way (`holdFromMs`, read by `hostFor`). Returns how many hosts
 * now wait longer than they did.
 */
export function holdEveryHost(s: FrontierState, atMs: number): number {
  if (atMs > s.holdFromMs) s.holdFromMs = atMs;
  let held = 0;
  for (const h of s.hosts) {
    const before = h.nextEligibleMs;
    holdWindows(s, h, atMs);
    if (h.nextEligibleMs > before) held++;
  }
  return held;
}

/**
 * Spends `h`'s window, and an address's, at `atMs` (never earlier than they are): the address
 * in `slot` of `s.ips`, or with −2 the host's own. A ready host goes back to wait.
 */
function holdWindows(s: FrontierState, h: HostRecord, atMs: number, slot = -2): void {
  const next = atMs + h.intervalMs;
  if (next > h.nextEligibleMs) h.nextEligibleMs = next;
  if (slot !== -2) {
    s.ips.spendSlot(slot, atMs);
  } else if (h.ip !== '') {
    s.ips.spendSlot(ipSlotOf(s, h), atMs);
    if (atMs > h.ipSpendMs) {
      h.ipSpendMs = atMs;
      h.ipSpendIntervalMs = h.intervalMs;
    }
  }
  // A parked host re-checks its windows when it surfaces; a ready one must go back to wait.
  if (h.state === HostState.Ready) {
    s.ready[shardOf(s, h.id)]!.remove(h.id);
    park(s, h);
  }
}

/** `Frontier.wake` on a known host (see there). */
export function wake(s: FrontierState, h: HostRecord): boolean {
  if (h.state !== HostState.Parked) return false;
  const id = h.id;
  const at = windowsOpenAt(s, h);
  if (at >= s.parkedAt[id]!) return false;
  s.parkedAt[id] = at;
  s.hostHeap.update(id);
  return true;
}

/**
 * The earliest clock (ms) at which a dispatch can succeed, or undefined when nothing waits.
 * Lazily re-keys a parked host whose true eligibility moved later.
 */
export function nextEligible(s: FrontierState): number | undefined {
  let at: number | undefined;
  for (const b of s.ready) if (b.size > 0) at = s.clockMs;
  if (s.frontBank.size > 0 && (s.effectiveTarget === 0 || s.active < s.effectiveTarget)) at = s.clockMs;
  const heap = s.hostHeap;
  while (heap.size > 0) {
    const h = s.hosts[heap.peek()]!;
    const trueAt = windowsOpenAt(s, h);
    if (trueAt > s.parkedAt[h.id]!) {
      s.parkedAt[h.id] = trueAt;
      heap.update(h.id);
      continue;
    }
    // Hosts held for a full address (parked at Infinity) wait for an answer, not a time.
    const top = s.parkedAt[h.id]!;
    if (top !== Infinity && (at === undefined || top < at)) at = top;
    break;
  }
  if (s.wheel && s.wheel.len > 0) {
    const tick = s.wheel.nextTick();
    if (tick !== undefined) {
      const t = Math.max(tick, s.wheelHour + 1) * HOUR_MS;
      if (at === undefined || t < at) at = t;
    }
  }
  return at;
}

/**
 * After a restore (queues loaded): hosts that held a back queue and still have work park
 * again, the rest with work wait in the front bank.
 */
export function restoreBanks(s: FrontierState, wasActive: readonly boolean[]): void {
  for (const h of s.hosts) {
    const work = s.queues.size(h.id) > 0;
    if (wasActive[h.id] && work) {
      s.active++;
      park(s, h);
    } else if (work) {
      h.state = HostState.Front;
      s.frontBank.push(h.id);
      if (s.opts.dispatchThreads > 0) s.aging.push(h.id);
    }
  }
}
