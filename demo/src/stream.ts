/**
 * The "10 million URLs" run, free of the DOM and of the worker's messaging so Node tests can
 * drive it: synthetic raw URLs (`SyntheticUrls`) are generated, canonicalized, keyed and
 * merged into one seen-set, a batch at a time — the same path a crawler's discoveries take.
 * Between batches the loop reports progress and yields to the event loop (so a cancel message
 * can arrive); clock, progress sink, yield and cancel check are injected. At the end it reports
 * URLs per second and the seen-set's bytes per distinct URL, and the generator's own count of
 * distinct pages, which the seen-set's count must equal.
 */
import { canonicalize, urlKeyBatch } from '../../src/browser.js';
import { defineOptions, numberField } from '../../src/options/index.js';
import { DemoSeenSet } from './seen.js';
import { SyntheticUrls } from './synth.js';

/** What to run. */
export interface StreamOptions {
  /** URLs to generate. */
  readonly total: number;
  /** URLs per batch (one canonicalize loop, one keying call, one seen-set merge), at most 2²⁰. Default 65,536. */
  readonly batch?: number;
  /** Generator seed. Default 1. */
  readonly seed?: number;
  /** Share of URLs that re-spell an earlier page. Default 0.25. */
  readonly dupRate?: number;
}

interface StreamSettings {
  total: number | undefined;
  batch: number;
  seed: number;
  dupRate: number;
}

const resolveStream = defineOptions<StreamSettings>(
  'runStream',
  {
    total: numberField({ min: 1, max: 100_000_000, integer: true }),
    batch: numberField({ min: 1, max: 1 << 20, integer: true, default: 65536 }),
    seed: numberField({ min: 0, max: 0xffffffff, integer: true, default: 1 }),
    dupRate: numberField({ min: 0, max: 0.99, default: 0.25 }),
  },
  (o) => (o.total === undefined ? 'total is required (the number of URLs to generate)' : undefined),
);

/** Progress after a batch. */
export interface StreamProgress {
  /** URLs processed so far. */
  readonly done: number;
  /** Distinct URLs in the seen-set so far. */
  readonly unique: number;
  /** Milliseconds since the start. */
  readonly elapsedMs: number;
}

/** The final report. */
export interface StreamReport extends StreamProgress {
  /** The URLs asked for. */
  readonly total: number;
  /** Whether the run stopped early on request. */
  readonly cancelled: boolean;
  /** Distinct pages the generator emitted: what `unique` must equal. */
  readonly expectedUnique: number;
  /** Lines canonicalize refused (0 for the generator's URLs; counted, not assumed). */
  readonly rejected: number;
  /** URLs per second over the whole run (generation included). */
  readonly urlsPerSec: number;
  /** URLs per second of the dedup pipeline alone: canonicalize + key + seen-set, generation excluded. */
  readonly pipelineUrlsPerSec: number;
  /** Milliseconds spent in each phase. */
  readonly phaseMs: { readonly generate: number; readonly canonicalize: number; readonly key: number; readonly seen: number };
  /** Bloom filter bits per distinct URL. */
  readonly filterBitsPerUrl: number;
  /** Exact set bytes per distinct URL. */
  readonly exactBytesPerUrl: number;
  /** Filter + exact set, bytes per distinct URL. */
  readonly bytesPerUrl: number;
  /** Filter answers "maybe seen" that were new URLs, over all new URLs checked: the observed FPR. */
  readonly observedFpr: number;
}

/** The environment the loop runs in. */
export interface StreamHooks {
  /** Monotonic milliseconds (performance.now in the worker). */
  now(): number;
  /** Called after every batch. */
  progress(p: StreamProgress): void;
  /** Lets pending events run (a cancel message); resolves soon. */
  yieldToEvents(): Promise<void>;
  /** Whether a cancel was requested. */
  cancelled(): boolean;
}

/** Runs the stream to the end (or a cancel) and reports. Frees the seen-set before returning. */
export async function runStream(options: StreamOptions, hooks: StreamHooks): Promise<StreamReport> {
  const o = resolveStream(options);
  const total = o.total!;
  const batch = o.batch;
  const synth = new SyntheticUrls({ seed: o.seed, dupRate: o.dupRate });
  const seen = new DemoSeenSet(total);
  const raw: string[] = [];
  const canon: string[] = [];
  let keys = new Uint32Array(0);
  let done = 0;
  let rejected = 0;
  let cancelled = false;
  let genMs = 0;
  let canonMs = 0;
  let keyMs = 0;
  let seenMs = 0;
  const t0 = hooks.now();
  try {
    while (done < total) {
      if (hooks.cancelled()) {
        cancelled = true;
        break;
      }
      const n = Math.min(batch, total - done);
      const tGen = hooks.now();
      synth.fill(raw, n);
      const tCanon = hooks.now();
      canon.length = 0;
      for (let i = 0; i < n; i++) {
        const c = canonicalize(raw[i]!);
        if (c === null) rejected++;
        else canon.push(c);
      }
      const tKey = hooks.now();
      if (keys.length < canon.length * 4) keys = new Uint32Array(canon.length * 4);
      const batchKeys = keys.length === canon.length * 4 ? keys : keys.subarray(0, canon.length * 4);
      urlKeyBatch(canon, 'registrable', batchKeys);
      const tSeen = hooks.now();
      seen.merge(batchKeys);
      const tEnd = hooks.now();
      genMs += tCanon - tGen;
      canonMs += tKey - tCanon;
      keyMs += tSeen - tKey;
      seenMs += tEnd - tSeen;
      done += n;
      hooks.progress({ done, unique: seen.stats().unique, elapsedMs: hooks.now() - t0 });
      await hooks.yieldToEvents();
    }
    const elapsedMs = Math.max(hooks.now() - t0, 1e-3);
    const s = seen.stats();
    const unique = s.unique;
    const per = (x: number): number => (unique > 0 ? x / unique : 0);
    return {
      total,
      done,
      unique,
      elapsedMs,
      cancelled,
      expectedUnique: synth.fresh,
      rejected,
      urlsPerSec: (done / elapsedMs) * 1000,
      pipelineUrlsPerSec: (done / Math.max(canonMs + keyMs + seenMs, 1e-3)) * 1000,
      phaseMs: { generate: genMs, canonicalize: canonMs, key: keyMs, seen: seenMs },
      filterBitsPerUrl: per(s.filterBits),
      exactBytesPerUrl: per(s.exactBytes),
      bytesPerUrl: per(s.filterBits / 8 + s.exactBytes),
      observedFpr: unique > 0 ? s.falsePositives / unique : 0,
    };
  } finally {
    seen.free();
  }
}
