/**
 * The messages between the page and the 10-million-URL worker (structured-clone friendly:
 * plain objects of numbers, strings and booleans).
 */
import type { StreamOptions, StreamProgress, StreamReport } from './stream.js';

/** Page → worker. */
export type ToWorker =
  | { readonly type: 'start'; readonly wasmUrl: string; readonly options: StreamOptions }
  | { readonly type: 'cancel' };

/** Worker → page. */
export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'progress'; readonly progress: StreamProgress }
  | { readonly type: 'done'; readonly report: StreamReport }
  | { readonly type: 'error'; readonly message: string };
