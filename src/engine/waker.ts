/**
 * One sleeping loop's alarm clock: `wait(delayMs)` resolves when the timer fires or when
 * `notify()` is called, whichever is first, and never spins. A `notify()` while nobody waits
 * is remembered (once), so a completion that lands between two waits is not lost. `wakeups`
 * counts resolutions: the engine's "never a busy loop" promise is tested by bounding it.
 *
 * One timer, kept across waits (issue 19): the engine's loop is woken by a completion far
 * more often than by its deadline, and its next deadline is usually the one it had (the next
 * eligible host did not change). Clearing the timer on every notify and arming a new one on
 * every wait cost a timer-list insert and removal per page; instead a notify leaves the timer
 * armed (unref'd: a loop that stopped waiting never holds the process open), a wait whose
 * deadline is not earlier keeps it (ref'd again), and a timer that fires before the current
 * deadline re-arms itself for the rest. Only an earlier deadline moves it.
 */
/**
 * Longest single timer: Node runs a longer `setTimeout` after 1 ms instead (a busy loop), so a
 * far-off wake-up is capped here and the loop simply looks again.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A timer may fire up to a millisecond before the monotonic clock says its delay passed (Node
 * counts from the event loop's cached time): that counts as on time, not as early.
 */
const TIMER_SLACK_MS = 1;

export class Waker {
  /** How many times a wait ended. */
  wakeups = 0;
  /** How many of those ended by the timer. */
  timerWakeups = 0;
  /** How many timers were armed (test-only counter: one per wait before issue 19). @internal */
  timersArmed = 0;
  #resolve: (() => void) | undefined;
  /** The current waiter's deadline on `#now`'s clock; Infinity when none. */
  #deadline = Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When `#timer` fires, on `#now`'s clock. */
  #timerAt = Infinity;
  #pending = false;
  readonly #now: () => number;
  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    if (this.#resolve === undefined || this.#deadline === Infinity) return;
    const left = this.#deadline - this.#now();
    if (left > TIMER_SLACK_MS) {
      this.#arm(this.#deadline, left);
      return;
    }
    this.timerWakeups++;
    this.notify();
  };

  /** @param now monotonic ms clock the deadlines are kept on (the timers' own time: default `performance.now`) */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Ends the current wait now, or the next one as soon as it starts. */
  notify(): void {
    const resolve = this.#resolve;
    if (resolve === undefined) {
      this.#pending = true;
      return;
    }
    this.#resolve = undefined;
    this.#deadline = Infinity;
    // Kept for the next wait, but never what keeps the process alive.
    this.#timer?.unref();
    this.wakeups++;
    resolve();
  }

  /** Sleeps until `notify()` or, when `delayMs` is a finite number, that many ms (at least 1). */
  wait(delayMs?: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      this.wakeups++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      if (delayMs === undefined || !Number.isFinite(delayMs)) return;
      const ms = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(delayMs)));
      const deadline = this.#now() + ms;
      this.#deadline = deadline;
      if (this.#timer !== undefined && this.#timerAt <= deadline) this.#timer.ref();
      else this.#arm(deadline, ms);
    });
  }

  /** Cancels a pending timer (the waiter stays asleep until notified). */
  cancel(): void {
    this.#deadline = Infinity;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = Infinity;
    }
  }

  #arm(at: number, ms: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.timersArmed++;
    this.#timerAt = at;
    this.#timer = setTimeout(this.#onTimer, Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(ms))));
  }
}
