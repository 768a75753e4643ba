/**
 * The demo's Web Worker: runs `runStream` off the main thread so the page stays responsive
 * while millions of URLs go through the seen-set. It loads its own instance of the wasm core
 * (a worker is a separate realm) from the URL the page sends, posts progress after every
 * batch and the report at the end, and stops between batches when told to cancel.
 */
import { loadCore } from '../../src/browser.js';
import type { FromWorker, ToWorker } from './messages.js';
import { runStream } from './stream.js';

/** The parts of DedicatedWorkerGlobalScope used here (the DOM lib does not declare it). */
interface WorkerScope {
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
  postMessage(message: FromWorker): void;
}

const scope = globalThis as unknown as WorkerScope;
let cancelRequested = false;
let running = false;

/** One reused channel: posting to it queues a task, which lets a pending cancel message run first. */
const tick = new MessageChannel();
let wake: (() => void) | undefined;
tick.port1.onmessage = () => {
  const w = wake;
  wake = undefined;
  w?.();
};
function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => {
    wake = resolve;
    tick.port2.postMessage(0);
  });
}

async function start(msg: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  if (running) {
    scope.postMessage({ type: 'error', message: 'a run is already in progress' });
    return;
  }
  running = true;
  cancelRequested = false;
  try {
    await loadCore(msg.wasmUrl);
    const report = await runStream(msg.options, {
      now: () => performance.now(),
      progress: (progress) => scope.postMessage({ type: 'progress', progress }),
      yieldToEvents,
      cancelled: () => cancelRequested,
    });
    scope.postMessage({ type: 'done', report });
  } catch (err) {
    scope.postMessage({ type: 'error', message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  } finally {
    running = false;
  }
}

scope.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === 'cancel') cancelRequested = true;
  else void start(msg);
};
scope.postMessage({ type: 'ready' });
