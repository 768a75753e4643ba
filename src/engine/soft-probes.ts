/**
 * `AskedProbes`: the soft-404 probes a crawl asked and has not heard back from — made-up URLs
 * (`SoftDetector` makes them, `EngineOptions.soft404Probe`) queued as links of the page that
 * brought a body to the threshold, each waiting for its fetch's answer.
 *
 * Owns: made-up URL → its probe, from the ask until its reply is journaled (a transient answer —
 * a 5xx, a 429, none — is waited past while the frontier asks again; one it ends is given up);
 * what a journal record says of a probe (`ProbeNote`: the page that asked it — `pb`, `ps`; the
 * probe's reply — `pr`, `ps`, `pf`), and the checkpoint's list of probes asked
 * (`SoftProbeRecord`), so a probe asked before a kill or a checkpoint is still known as one when
 * its answer comes after the resume.
 * Never: fetch, decide a verdict (`SoftDetector.settleProbe` does), or count (the engine's tally).
 *
 * Bounded at `MAX_PENDING_PROBES` (oldest dropped): a probe forgotten here is answered as a plain
 * URL — its 404 ends it — and its body's wait ends by `probeWait` (src/dedup/soft404.ts).
 */
import { MAX_PENDING_PROBES, type SoftDetector, type SoftProbe, type SoftProbeReply } from '../dedup/index.js';
import { evictOldest } from '../lru/index.js';
import { type Outcome, isTransientStatus } from '../model/index.js';
import { HEX64, type ProbeNote, hex64, replyText } from './records.js';

/** A probe asked, as a checkpoint keeps it: its URL, host group, shape and body's fingerprint (hex). */
export interface SoftProbeRecord {
  readonly u: string;
  readonly h: string;
  readonly s: string;
  readonly f: string;
}

/** The problem with a checkpoint's probe record, or undefined when it is well formed. */
export function softProbeRecordProblem(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return 'is not an object';
  const o = r as Record<string, unknown>;
  for (const f of ['u', 'h', 's']) if (typeof o[f] !== 'string' || o[f] === '') return `field ${f} is not a non-empty string`;
  if (typeof o['f'] !== 'string' || !HEX64.test(o['f'])) return 'field f is not a fingerprint (16 hex digits)';
  return undefined;
}


/** What `AskedProbes.hear` found: the probe's reply, settled, or a transient answer it waits past. */
export type ProbeHearing =
  | {
      readonly final: true;
      readonly note: ProbeNote;
      /** The body asked about is a page's: the site answered not found, or another page. */
      readonly cleared: boolean;
      /** The reply was that body: the site's not-found page, served for the made-up URL too. */
      readonly template: boolean;
      /** The reply was another whole page: the made-up URL exists, a page of the site. */
      readonly served: boolean;
    }
  | { readonly final: false };

export class AskedProbes {
  readonly #asked = new Map<string, SoftProbe>();

  constructor(private readonly soft: SoftDetector) {}

  /** Probes waiting for their answer. */
  get size(): number {
    return this.#asked.size;
  }

  /** Waits for `probe`'s answer. */
  ask(probe: SoftProbe): void {
    this.#asked.delete(probe.url);
    this.#asked.set(probe.url, probe);
    if (this.#asked.size > MAX_PENDING_PROBES) evictOldest(this.#asked);
  }

  /** Whether `url` is a probe asked and not forgotten. */
  has(url: string): boolean {
    return this.#asked.has(url);
  }

  /**
   * Stops waiting for `url`: its reply is journaled (the engine's ack) or was replayed. Until then
   * a checkpoint keeps it, so a reply heard and lost in a kill is heard again after the resume.
   */
  forget(url: string): void {
    this.#asked.delete(url);
  }

  /**
   * Gives up on `url` (the frontier ended it without a reply: its retries spent, or a permanent
   * transport failure): its body is read as without a probe.
   */
  abandon(url: string): void {
    const probe = this.#asked.get(url);
    if (probe === undefined) return;
    this.#asked.delete(url);
    this.soft.giveUp(probe);
  }

  /**
   * Hears the answer `o` to `url`: undefined when `url` is no probe asked; a transient answer (429,
   * 5xx, none: the frontier asks again, or ends it — `abandon`) is waited past; any other is the
   * probe's reply, settled (`SoftDetector.settleProbe`).
   */
  hear(url: string, o: Outcome): ProbeHearing | undefined {
    const probe = this.#asked.get(url);
    if (probe === undefined) return undefined;
    const s = o.status;
    if (isTransientStatus(s)) return { final: false };
    const whole = s >= 200 && s < 300 && o.truncated !== true && o.sitemap !== true;
    const reply: SoftProbeReply = { status: s, fp: whole ? o.contentFp : undefined };
    const verdict = this.soft.settleProbe(probe, reply);
    // A body the host serves as its not-found page already (another shape's template) is no page either.
    const known = reply.fp !== undefined && this.soft.isTemplate(probe.host, reply.fp);
    return {
      final: true,
      note: { pr: replyText(reply), ps: probe.shape, pf: hex64(probe.fp) },
      cleared: verdict === 'page',
      template: verdict === 'template' || known,
      served: verdict === 'page' && reply.fp !== undefined && !known,
    };
  }

  /** The probes asked and not forgotten whose URL `live` says the frontier may still fetch, as a checkpoint keeps them. */
  export(live: (url: string) => boolean): SoftProbeRecord[] {
    return [...this.#asked.values()].filter((p) => live(p.url)).map((p) => ({ u: p.url, h: String(p.host), s: p.shape, f: hex64(p.fp) }));
  }

  /** Waits again for the probes a checkpoint kept. */
  import(records: readonly SoftProbeRecord[]): void {
    for (const r of records) this.ask({ host: r.h, url: r.u, shape: r.s, fp: BigInt(`0x${r.f}`) });
  }
}
