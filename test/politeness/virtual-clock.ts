/**
 * A virtual monotonic clock for politeness tests: `sleep(ms)` records the request and
 * advances the clock at once, so no test ever waits for real time.
 */
export class VirtualClock {
  /** Current virtual time, ms. */
  t: number;
  /** Every delay `sleep` was asked for, in order. */
  readonly sleeps: number[] = [];

  constructor(start = 0) {
    this.t = start;
  }

  readonly now = (): number => this.t;

  readonly sleep = (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    this.t += ms;
    return Promise.resolve();
  };
}

interface Timer {
  readonly due: number;
  readonly seq: number;
  readonly resolve: () => void;
  cancelled: boolean;
}

/**
 * A discrete-event virtual clock for tests with concurrent sleepers: `sleep(ms)` registers a
 * timer at now + ms, and `run()` plays the timers in time order (ties in the order they were
 * set), letting every promise settle between two timers. Time only moves inside `run()`, and
 * only as far as the next timer, so nothing waits for real time.
 */
export class EventClock {
  /** Current virtual time, ms. */
  t: number;
  /** Every delay `sleep` was asked for, in order. */
  readonly sleeps: number[] = [];
  readonly #timers: Timer[] = [];
  #seq = 0;

  constructor(start = 0) {
    this.t = start;
  }

  readonly now = (): number => this.t;

  /** Sleeps `ms` of virtual time; an abort of `signal` rejects at once and cancels the timer. */
  readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    this.sleeps.push(ms);
    return new Promise<void>((resolve, reject) => {
      const timer: Timer = { due: this.t + ms, seq: this.#seq++, resolve, cancelled: false };
      this.#timers.push(timer);
      signal?.addEventListener(
        'abort',
        () => {
          timer.cancelled = true;
          reject(signal.reason);
        },
        { once: true },
      );
    });
  };

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.#timers.filter((x) => !x.cancelled).length;
  }

  /** Lets every queued promise reaction run (a macrotask boundary drains the microtask queue). */
  async settle(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Fires timers in time order until none is left (or `until` is reached); returns the steps taken. */
  async run(until = Number.POSITIVE_INFINITY, maxSteps = 1_000_000): Promise<number> {
    for (let step = 0; step < maxSteps; step++) {
      await this.settle();
      let best = -1;
      for (let i = 0; i < this.#timers.length; i++) {
        const x = this.#timers[i]!;
        if (x.cancelled) continue;
        const b = best < 0 ? undefined : this.#timers[best]!;
        if (b === undefined || x.due < b.due || (x.due === b.due && x.seq < b.seq)) best = i;
      }
      if (best < 0 || this.#timers[best]!.due > until) {
        for (let i = this.#timers.length - 1; i >= 0; i--) if (this.#timers[i]!.cancelled) this.#timers.splice(i, 1);
        return step;
      }
      const [next] = this.#timers.splice(best, 1);
      if (next!.due > this.t) this.t = next!.due;
      next!.resolve();
    }
    throw new Error(`EventClock.run: more than ${maxSteps} steps`);
  }
}
