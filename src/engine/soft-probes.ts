/**
 * `AskedProbes`: the soft-404 probes a crawl asked and has not heard back from — made-up URLs
 * (`SoftDetector` makes them, `EngineOptions.soft404Probe`) queued as links of the page that
 * brought a body to the threshold, each waiting for its fetch's answer.
 *
 * Owns: made-up URL → its probe and the transient answers it had (a 5xx, a 429, no answer: the
 * frontier retries the URL, and the probe waits on, up to `retryLimit` of them); what a journal
 * record says of a probe (`ProbeNote`: the page that asked it — `pb`, `ps`; the probe's reply —
 * `pr`, `ps`), and the checkpoint's list of probes asked (`SoftProbeRecord`), so a probe asked
 * before a kill or a checkpoint is still known as one when its answer comes after the resume.
 * Never: fetch, decide a verdict (`SoftDetector.settleProbe` does), or count (the engine's tally).
 *
 * Bounded at `MAX_PENDING_PROBES` (oldest dropped): a probe forgotten here is answered as a plain
 * URL — its 404 ends it — and its body's wait ends by `probeWait` (src/dedup/soft404.ts).
 */
import { MAX_PENDING_PROBES, type SoftDetector, type SoftProbe, type SoftProbeReply } from '../dedup/index.js';
import { evictOldest } from '../lru/index.js';
import { type Outcome, OutcomeClass, classOfOutcome } from '../model/index.js';

/** A probe asked, as a checkpoint keeps it: its URL, host group and shape. */
export interface SoftProbeRecord {
  readonly u: string;
  readonly h: string;
  readonly s: string;
}

/** What an outcome record says of a probe: the page asked it (`pb`, `ps`), or it is the probe's reply (`pr`, `ps`). */
export type ProbeNote = { readonly pb: string; readonly ps: string } | { readonly pr: string; readonly ps: string };

/** The problem with a checkpoint's probe record, or undefined when it is well formed. */
export function softProbeRecordProblem(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return 'is not an object';
  const o = r as Record<string, unknown>;
  for (const f of ['u', 'h', 's']) if (typeof o[f] !== 'string' || o[f] === '') return `field ${f} is not a non-empty string`;
  return undefined;
}

const REPLY = /^(\d{1,3})(?::([0-9a-f]{16}))?$/;

/** A reply as a journal record writes it: `404`, `200:<fingerprint in hex>`. */
export function replyText(reply: SoftProbeReply): string {
  return reply.fp === undefined ? String(reply.status) : `${reply.status}:${reply.fp.toString(16).padStart(16, '0')}`;
}

/** A journal record's reply (`replyText`), or undefined when malformed. */
export function replyOf(text: string): SoftProbeReply | undefined {
  const m = REPLY.exec(text);
  if (m === null) return undefined;
  return { status: Number(m[1]), fp: m[2] === undefined ? undefined : BigInt(`0x${m[2]}`) };
}

/** What `AskedProbes.hear` found: the probe's reply, settled, or a transient answer it waits past. */
export type ProbeHearing =
  | { readonly final: true; readonly note: ProbeNote; readonly cleared: boolean; readonly template: boolean; readonly served: boolean }
  | { readonly final: false };

export class AskedProbes {
  readonly #asked = new Map<string, { readonly probe: SoftProbe; tries: number }>();

  constructor(
    private readonly soft: SoftDetector,
    private readonly retryLimit: number,
  ) {}

  /** Probes waiting for their answer. */
  get size(): number {
    return this.#asked.size;
  }

  /** Waits for `probe`'s answer. */
  ask(probe: SoftProbe): void {
    this.#asked.delete(probe.url);
    this.#asked.set(probe.url, { probe, tries: 0 });
    if (this.#asked.size > MAX_PENDING_PROBES) evictOldest(this.#asked);
  }

  /** Whether `url` is a probe waiting for its answer. */
  has(url: string): boolean {
    return this.#asked.has(url);
  }

  /** Stops waiting for `url` (a journal's replay heard its reply). */
  forget(url: string): void {
    this.#asked.delete(url);
  }

  /**
   * Hears the answer `o` to `url`: undefined when `url` is no probe asked; a transient answer the
   * frontier retries (up to `retryLimit`) is waited past; any other is the probe's reply, settled
   * (`SoftDetector.settleProbe`): `cleared` when the site answered not found (or with another page,
   * clearing a body awaiting it), `template` when its body is now a template of the host, `served`
   * when it was a whole page that is none (the URL made up exists: a page of the site).
   */
  hear(url: string, o: Outcome, host: string): ProbeHearing | undefined {
    const asked = this.#asked.get(url);
    if (asked === undefined) return undefined;
    if (classOfOutcome(o) === OutcomeClass.Transient && ++asked.tries <= this.retryLimit) return { final: false };
    this.#asked.delete(url);
    const s = o.status;
    const whole = s >= 200 && s < 300 && o.truncated !== true && o.sitemap !== true;
    const reply: SoftProbeReply = { status: s, fp: whole ? o.contentFp : undefined };
    const pages = this.soft.settleProbe(asked.probe, reply);
    const template = reply.fp !== undefined && this.soft.isTemplate(host, reply.fp);
    return {
      final: true,
      note: { pr: replyText(reply), ps: asked.probe.shape },
      cleared: pages > 0 || s === 404 || s === 410,
      template,
      served: reply.fp !== undefined && !template,
    };
  }

  /** The probes waiting, as a checkpoint keeps them. */
  export(): SoftProbeRecord[] {
    return [...this.#asked.values()].map(({ probe }) => ({ u: probe.url, h: String(probe.host), s: probe.shape }));
  }

  /** Waits again for the probes a checkpoint kept. */
  import(records: readonly SoftProbeRecord[]): void {
    for (const r of records) this.ask({ host: r.h, url: r.u, shape: r.s });
  }
}
