/**
 * Seeing a request leave: undici publishes `undici:client:sendHeaders` when a request's
 * headers are written to its socket (the engine's send gate listens to the same channel).
 * `expect(url)` returns a promise of that moment for the next request to `url`.
 */
import diagnostics from 'node:diagnostics_channel';

// One identity for a request on the wire, the send gate's (keep the two watchers in step).
import { sendId } from '../engine/send-gate.js';

export { sendId };

export class SendWatch {
  private readonly waiting = new Map<string, ((atMs: number) => void)[]>();
  private on = false;

  constructor(private readonly now: () => number) {}

  private readonly onSend = (message: unknown): void => {
    const r = (message as { request?: { origin?: unknown; path?: unknown } } | null)?.request;
    if (r === undefined || typeof r.origin !== 'string' || typeof r.path !== 'string') return;
    const list = this.waiting.get(r.origin + r.path);
    const first = list?.shift();
    if (list !== undefined && list.length === 0) this.waiting.delete(r.origin + r.path);
    first?.(this.now());
  };

  /** The moment the next request to `url` leaves, and a `cancel` for when it never does. */
  expect(url: string): { sent: Promise<number>; cancel: () => void } {
    const id = sendId(url);
    if (id === undefined) return { sent: new Promise<number>(() => {}), cancel: () => {} };
    if (!this.on) {
      diagnostics.subscribe('undici:client:sendHeaders', this.onSend);
      this.on = true;
    }
    let resolve!: (atMs: number) => void;
    const sent = new Promise<number>((r) => (resolve = r));
    let list = this.waiting.get(id);
    if (list === undefined) this.waiting.set(id, (list = []));
    list.push(resolve);
    const cancel = (): void => {
      const l = this.waiting.get(id);
      if (l === undefined) return;
      const i = l.indexOf(resolve);
      if (i >= 0) l.splice(i, 1);
      if (l.length === 0) this.waiting.delete(id);
    };
    return { sent, cancel };
  }

  close(): void {
    if (this.on) diagnostics.unsubscribe('undici:client:sendHeaders', this.onSend);
    this.on = false;
    this.waiting.clear();
  }
}
