/**
 * The real clocks and the real sleep, used only as defaults at the outermost layer (the
 * governor's constructor and `waitJitter`); every decision below takes them injected. All of
 * them exist in Node ≥ 16 and in browsers, so this file stays browser-safe.
 */

/** The longest delay one `setTimeout` honours (2^31 − 1 ms); longer ones fire at once. */
const MAX_TIMER_MS = 2147483647;

/** Monotonic milliseconds since an arbitrary origin (`performance.now()`). */
export function monotonicNow(): number {
  return performance.now();
}

/** Unix milliseconds from the wall clock (`Date.now()`); used only to measure HTTP-dates. */
export function wallClockNow(): number {
  return Date.now();
}

/**
 * Resolves after `ms` milliseconds of real time, in timer-sized chunks so huge delays do not
 * fire early. An abort of `signal` clears the pending timer and rejects with the signal's
 * reason, so a cancelled wait holds no timer.
 */
export async function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  let left = ms;
  while (left > 0) {
    const step = left > MAX_TIMER_MS ? MAX_TIMER_MS : left;
    await new Promise<void>((resolve, reject) => {
      if (signal === undefined) {
        setTimeout(resolve, step);
        return;
      }
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, step);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    left -= step;
  }
}
