/**
 * Logging what an operator needs from a running engine, through any pino-compatible logger
 * (`info/warn/error/debug(object, message)`): start, resume and stop; per-host transitions —
 * a robots.txt outage beginning and ending, the backoff level moving, a host declared dead or
 * coming back; checkpoints (and, in cluster mode, a damaged slot checkpoint replaced by its
 * previous one); fetch errors. The engine is silent unless given a logger.
 *
 * Host transitions are found by comparing each host's status at every progress tick with the
 * last one seen (`HostWatch`), so the engine itself carries no logging code; a transition
 * shorter than one progress period can go unlogged, which is the price of not instrumenting
 * the frontier's hot path.
 *
 * Also `lineLogger`: the CLI's logger, writing plain lines or pino-style JSON lines.
 */
import type { ClusterCheckpointFallback, ClusterPause, ClusterStoreRestore } from '../cluster/options.js';
import type { CrawlSummary, Engine, HostStatus, RecoveryInfo } from '../engine/index.js';
import { duration } from '../engine/status.js';
import { HostFlags } from '../model/index.js';

/** The part of a pino logger meguri calls: an object of fields first, then a message. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Levels of `lineLogger`, in pino's numbering. */
export const LOG_LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity } as const;
export type LogLevel = keyof typeof LOG_LEVELS;

/** What `HostWatch` remembers of a host. */
interface Seen {
  readonly backoffLevel: number;
  readonly robotsDown: boolean;
  /** Unreachable robots.txt answers in a row last logged while down (a later one is logged again). */
  readonly robotsFailures: number;
  readonly dead: boolean;
}

/** A host's change since the last look. */
export interface HostTransition {
  readonly host: string;
  readonly kind: 'robots-outage' | 'robots-recovered' | 'robots-given-up' | 'backoff' | 'dead' | 'revived';
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly reason: string;
}

/** Compares host statuses with the previous look and reports what changed. */
export class HostWatch {
  readonly #seen = new Map<string, Seen>();

  /** Transitions between the previous call and `hosts`. */
  diff(hosts: readonly HostStatus[]): HostTransition[] {
    const out: HostTransition[] = [];
    for (const h of hosts) {
      const was = this.#seen.get(h.host) ?? { backoffLevel: 0, robotsDown: false, robotsFailures: 0, dead: false };
      // An outage lasts through its retries (a retry in flight, or a failed one's answer before
      // the host's next turn, is not a recovery): it ends with an answer, or the host given up.
      const robotsDown = h.why === 'robots-unreachable' || (was.robotsDown && h.robotsFailures !== undefined);
      // A failed try is logged once the host waits on it (its reason then says so).
      let logged = robotsDown ? was.robotsFailures : 0;
      if (robotsDown && h.why === 'robots-unreachable' && (!was.robotsDown || (h.robotsFailures ?? 0) > was.robotsFailures)) {
        out.push({ host: h.host, kind: 'robots-outage', reason: h.reason });
        logged = h.robotsFailures ?? 0;
      } else if (!robotsDown && was.robotsDown) {
        out.push({ host: h.host, kind: h.robotsGaveUp === true ? 'robots-given-up' : 'robots-recovered', reason: h.reason });
      }
      const now: Seen = {
        backoffLevel: h.backoffLevel,
        robotsDown,
        robotsFailures: logged,
        dead: (h.flags & HostFlags.Dead) !== 0 || h.category === 'dead',
      };
      this.#seen.set(h.host, now);
      if (now.dead !== was.dead) out.push({ host: h.host, kind: now.dead ? 'dead' : 'revived', reason: h.reason });
      if (now.backoffLevel !== was.backoffLevel) out.push({ host: h.host, kind: 'backoff', from: was.backoffLevel, to: now.backoffLevel, reason: h.reason });
    }
    return out;
  }
}

const TRANSITION_TEXT: Record<HostTransition['kind'], string> = {
  'robots-outage': 'robots.txt unreachable: host waits',
  'robots-recovered': 'robots.txt reachable again',
  'robots-given-up': 'robots.txt unreachable: host given up, its URLs not fetched',
  backoff: 'backoff level changed',
  dead: 'host declared dead',
  revived: 'host no longer dead',
};

/**
 * Logs `engine`'s life to `logger` (see the module comment). Returns a function that detaches
 * every listener.
 */
export function attachLogger(engine: Engine, logger: Logger): () => void {
  const watch = new HostWatch();
  // Opening writes a first checkpoint before 'open' fires: it is logged after the start line.
  let early: object[] | undefined = [];
  let opened = false;
  const onOpen = (r: RecoveryInfo): void => {
    opened = true;
    const fb = r.checkpointFallback;
    if (fb !== undefined) {
      logger.warn({ event: 'checkpoint-fallback', generation: fb.generation, records: fb.records, savedAs: fb.savedAs ?? null, error: fb.reason }, 'checkpoint damaged: resumed the previous one and replayed its journals');
    }
    if (r.resumed) {
      logger.info({ event: 'resume', generation: r.generation, replayedOutcomes: r.replayedOutcomes, refetch: r.refetch.length, tornBytes: r.tornBytes, released: r.released ?? 0 }, 'crawl resumed');
    } else logger.info({ event: 'start', seeds: engine.options.seeds.length, dataDir: engine.options.dataDir ?? null }, 'crawl started');
    for (const c of early ?? []) logger.info(c, 'checkpoint written');
    early = undefined;
  };
  const onProgress = (): void => {
    for (const t of watch.diff(engine.hostStates())) {
      const level = t.kind === 'dead' || t.kind === 'robots-outage' || t.kind === 'robots-given-up' ? 'warn' : t.kind === 'backoff' ? 'debug' : 'info';
      logger[level]({ event: 'host', ...t }, TRANSITION_TEXT[t.kind]);
    }
  };
  const onCheckpoint = (c: { generation: number; bytes: number; urls: number; ms: number }): void => {
    const fields = { event: 'checkpoint', ...c, ms: Math.round(c.ms * 10) / 10 };
    if (early !== undefined) early.push(fields);
    else logger.info(fields, 'checkpoint written');
  };
  const onFallback = (f: ClusterCheckpointFallback): void => {
    logger.warn({ event: 'checkpoint-fallback', slot: f.slot, epoch: f.epoch, damaged: f.damaged, used: f.used, error: f.error.message }, 'slot checkpoint damaged: opened from the previous one (its work since is redone)');
  };
  const onStoreRestore = (r: ClusterStoreRestore): void => {
    if (r.kind === 'settings') logger.warn({ event: 'store-restore', kind: r.kind, file: r.file }, 'Redis had no record of the crawl: its settings were restored from the checkpoint store');
    else {
      const skipped = r.skipped.map((k) => ({ rel: k.rel, error: k.error.message }));
      logger.warn({ event: 'store-restore', kind: r.kind, slot: r.slot, epoch: r.epoch, used: r.used, skipped }, "Redis had no record of the slot's checkpoint: opened from the newest in the store (links that only Redis held are lost)");
    }
  };
  const onPause = (p: ClusterPause): void => {
    if (p.kind === 'paused') {
      logger.warn(
        { event: 'cluster-pause', kind: p.kind, sinceRenewalMs: Math.round(p.sinceRenewalMs), ...(p.error !== undefined ? { error: p.error } : {}) },
        `Redis not answering: this node stopped dispatching (no heartbeat renewal for ${duration(p.sinceRenewalMs)}); it keeps its slots if Redis answers before its heartbeat expires`,
      );
    } else if (p.kind === 'resumed') {
      logger.info({ event: 'cluster-pause', kind: p.kind, pausedMs: Math.round(p.pausedMs) }, `Redis reachable again: this node dispatches again after ${duration(p.pausedMs)}`);
    } else {
      logger.warn(
        { event: 'cluster-pause', kind: p.kind, slotsDropped: p.slotsDropped },
        `this node's heartbeat expired: it dropped its ${p.slotsDropped} slot(s) (their next owners open them from their checkpoints) and joined again`,
      );
    }
  };
  const onFetched = (p: { url: string; status: number; errorKind?: string | undefined; error?: string | undefined; host: string }): void => {
    if (p.status === 0) logger.warn({ event: 'fetch-error', url: p.url, host: p.host, errorKind: p.errorKind, error: p.error }, 'fetch failed');
    else logger.debug({ event: 'fetched', url: p.url, status: p.status }, 'fetched');
  };
  const onEnd = (s: CrawlSummary): void => {
    // A run that failed to open (a usage or a corrupt-file error) says so through its caller.
    if (!opened) return;
    // The last host transitions (a host given up just before the crawl drained) come first.
    onProgress();
    // Names that do not exist are refused before any request, so they never show as fetch
    // errors: one line each, as the end summary prints them.
    for (const u of s.unresolvedHosts) logger.warn({ event: 'no-such-name', host: u.host, code: u.code, urls: u.urls }, 'name does not exist: its URLs were not fetched');
    logger.info({ event: 'stop', reason: s.reason, fetched: s.progress.fetched, fetchedThisRun: s.progress.fetchedThisRun, errors: s.progress.errors }, 'crawl stopped');
  };
  engine.on('open', onOpen);
  engine.on('progress', onProgress);
  engine.on('checkpoint', onCheckpoint);
  engine.on('checkpointFallback', onFallback);
  engine.on('storeRestore', onStoreRestore);
  engine.on('clusterPause', onPause);
  engine.on('fetched', onFetched);
  engine.on('end', onEnd);
  return () => {
    engine.off('open', onOpen);
    engine.off('progress', onProgress);
    engine.off('checkpoint', onCheckpoint);
    engine.off('checkpointFallback', onFallback);
    engine.off('storeRestore', onStoreRestore);
    engine.off('clusterPause', onPause);
    engine.off('fetched', onFetched);
    engine.off('end', onEnd);
  };
}

/** Options of `lineLogger`. */
export interface LineLoggerOptions {
  /** Least level written. Default `info`. */
  readonly level?: LogLevel | undefined;
  /** `lines` (time, level, message, key=value…) or `json` (one pino-style object per line). */
  readonly format?: 'lines' | 'json' | undefined;
  /** Where each line goes (with its newline). */
  readonly write: (line: string) => void;
  /** Wall clock. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
}

/** A pino-compatible logger writing lines (the CLI's `--log-level` / `--log-format`). */
export function lineLogger(o: LineLoggerOptions): Logger {
  const min = LOG_LEVELS[o.level ?? 'info'];
  const now = o.now ?? Date.now;
  const json = o.format === 'json';
  const emit = (level: Exclude<LogLevel, 'silent'>) => (obj: object, msg?: string): void => {
    if (LOG_LEVELS[level] < min) return;
    const time = now();
    if (json) {
      o.write(`${JSON.stringify({ level: LOG_LEVELS[level], time, ...obj, msg })}\n`);
      return;
    }
    const fields = Object.entries(obj)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${fieldText(v)}`)
      .join(' ');
    o.write(`${new Date(time).toISOString()} ${level.toUpperCase().padEnd(5)} ${msg ?? ''}${fields ? ` ${fields}` : ''}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
