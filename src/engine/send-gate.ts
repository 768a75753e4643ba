/**
 * Send ordering per IP address: the frontier spaces *dispatches*, but what a server sees is
 * when each request's bytes leave, and that can lag a dispatch by a connect and a busy event
 * loop (measured here: up to hundreds of ms on a loaded machine, for a request that needs a
 * new connection, while one on a kept-alive connection leaves at once). Two hosts on one IP
 * dispatched one IP-step apart could then reach the server out of order or closer than the
 * step.
 *
 * The gate only ever delays. A request on an IP starts at once when nothing on that IP is
 * still unsent and the IP's step since the last request actually left has passed; otherwise
 * it waits in that IP's queue. When a request is seen leaving (`sent`), the caller re-spends
 * the frontier's windows from that instant (`onSent`), and the next queued request may leave
 * one step later (`max(ipFloor, the host's interval)`, the frontier's IP rule). A request that
 * ends without leaving (refused, failed to connect) releases the IP without a step.
 *
 * The gate sees requests leave only with the undici fetcher (its `sendHeaders` diagnostics
 * channel, `watch(true)`); unwatched, `send` starts every request at once. Content fetches and
 * robots.txt hops both enter through `send` and leave through `finished`, keyed as undici
 * names a request (origin + path and query).
 */
import diagnostics from 'node:diagnostics_channel';

/** The identity undici reports a request by: origin + path and query. */
export function sendId(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.origin + u.pathname + u.search;
  } catch {
    return undefined;
  }
}

interface Held {
  readonly id: string;
  readonly group: string;
  readonly start: () => void;
}

interface IpState {
  unsent: string | undefined;
  freeAt: number;
  readonly queue: Held[];
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Per-IP send ordering (see the module comment). */
export class SendGate {
  readonly #ips = new Map<string, IpState>();
  readonly #pending = new Map<string, { ip: string | undefined; group: string }>();
  /** Requests that had to wait for an earlier one on their IP. */
  heldCount = 0;

  /**
   * @param clock epoch-ms clock
   * @param stepOf the IP step after a request of `group` leaves, ms
   * @param onSent a request of `group` on `ip` left at `atMs`
   */
  constructor(
    private readonly clock: () => number,
    private readonly stepOf: (group: string) => number,
    private readonly onSent: (group: string, ip: string | undefined, atMs: number) => void,
  ) {}

  #watching = false;

  readonly #onSendHeaders = (message: unknown): void => {
    const r = (message as { request?: { origin?: unknown; path?: unknown } } | null)?.request;
    if (r === undefined || typeof r.origin !== 'string' || typeof r.path !== 'string') return;
    this.sent(r.origin + r.path, this.clock());
  };

  /** Whether requests are seen leaving (undici's `sendHeaders` channel is subscribed). */
  get watching(): boolean {
    return this.#watching;
  }

  /** Starts (true) or stops (false) watching requests leave; stopping forgets everything. */
  watch(on: boolean): void {
    if (on === this.#watching) return;
    this.#watching = on;
    if (on) diagnostics.subscribe('undici:client:sendHeaders', this.#onSendHeaders);
    else {
      diagnostics.unsubscribe('undici:client:sendHeaders', this.#onSendHeaders);
      this.clear();
    }
  }

  /**
   * Starts the request for `url` of `group` on `ip` through the send order (at once when
   * unwatched). Returns the id `finished` takes, or undefined when the request is not tracked.
   */
  send(url: string, group: string, ip: string | undefined, start: () => void): string | undefined {
    const id = this.#watching ? sendId(url) : undefined;
    if (id === undefined) start();
    else this.enter(ip, id, group, start);
    return id;
  }

  /** The request for `url` ended (answered or failed). */
  finished(url: string): void {
    const id = this.#watching ? sendId(url) : undefined;
    if (id !== undefined) this.done(id);
  }

  /** Requests started and not yet seen leaving. */
  get unsent(): number {
    return this.#pending.size;
  }

  /** Requests waiting for their IP. */
  get held(): number {
    let n = 0;
    for (const st of this.#ips.values()) n += st.queue.length;
    return n;
  }

  /** Runs `start` for request `id` (origin + path) now, or when its IP allows. */
  enter(ip: string | undefined, id: string, group: string, start: () => void): void {
    if (ip === undefined) {
      this.#pending.set(id, { ip, group });
      start();
      return;
    }
    let st = this.#ips.get(ip);
    if (st === undefined) {
      st = { unsent: undefined, freeAt: 0, queue: [], timer: undefined };
      this.#ips.set(ip, st);
    }
    if (st.unsent === undefined && st.queue.length === 0 && this.clock() >= st.freeAt) {
      st.unsent = id;
      this.#pending.set(id, { ip, group });
      start();
      return;
    }
    this.heldCount++;
    st.queue.push({ id, group, start });
    this.#schedule(ip, st);
  }

  /** Request `id` was seen leaving at `atMs`. */
  sent(id: string, atMs: number): void {
    const p = this.#pending.get(id);
    if (p === undefined) return;
    this.#pending.delete(id);
    this.onSent(p.group, p.ip, atMs);
    if (p.ip === undefined) return;
    const st = this.#ips.get(p.ip);
    if (st === undefined) return;
    if (st.unsent === id) st.unsent = undefined;
    st.freeAt = Math.max(st.freeAt, atMs + this.stepOf(p.group));
    this.#schedule(p.ip, st);
  }

  /** Request `id` ended; if it never left, its IP is released without a step. */
  done(id: string): void {
    const p = this.#pending.get(id);
    if (p === undefined) return;
    this.#pending.delete(id);
    if (p.ip === undefined) return;
    const st = this.#ips.get(p.ip);
    if (st === undefined) return;
    if (st.unsent === id) st.unsent = undefined;
    this.#schedule(p.ip, st);
  }

  /** Forgets everything (the run is ending); held requests are never started. */
  clear(): void {
    for (const st of this.#ips.values()) if (st.timer !== undefined) clearTimeout(st.timer);
    this.#ips.clear();
    this.#pending.clear();
  }

  #schedule(ip: string, st: IpState): void {
    if (st.unsent !== undefined || st.timer !== undefined) return;
    if (st.queue.length === 0) {
      if (this.clock() >= st.freeAt) this.#ips.delete(ip);
      return;
    }
    // Never start inside the caller's stack (sent() runs inside undici's write).
    st.timer = setTimeout(() => {
      st.timer = undefined;
      this.#release(ip, st);
    }, Math.max(0, Math.ceil(st.freeAt - this.clock())));
  }

  #release(ip: string, st: IpState): void {
    if (st.unsent !== undefined) return;
    if (this.clock() < st.freeAt) {
      this.#schedule(ip, st);
      return;
    }
    const next = st.queue.shift();
    if (next === undefined) return;
    st.unsent = next.id;
    this.#pending.set(next.id, { ip, group: next.group });
    next.start();
  }
}
