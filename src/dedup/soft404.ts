/**
 * Soft-404 detection by content fingerprint (DESIGN §6).
 *
 * A server that answers 200 OK with one "not found" page for every URL defeats the 404 stop
 * signal, but all those URLs share one content fingerprint. So, per host, the detector
 * counts the distinct URLs seen with each fingerprint; once `threshold` distinct URLs share
 * one, that fingerprint is the host's soft-404 template, and every later URL returning it
 * should be treated as gone. A host serving one boilerplate for many URLs is also a trap
 * suspect; the caller decides whether to flag it.
 *
 * Memory is bounded per host: at most `maxFingerprintsPerHost` candidate fingerprints, kept
 * in least-recently-seen order (a template is seen again and again, so it stays; a page
 * seen once ages out), each holding at most `threshold - 1` keys until it is confirmed, and
 * at most `maxFingerprintsPerHost` confirmed templates.
 */
import type { KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { checkHostRef, checkKeyArg } from './args.js';

/**
 * How a detector names a host: any stable primitive — its HostKey as a bigint, a host-table
 * row, or its group name. Map semantics apply (1n and 1 are different hosts).
 */
export type HostRef = bigint | number | string;

/** Options of a `SoftDetector`. */
export interface SoftDetectorOptions {
  /** Distinct URLs sharing one fingerprint that make it a template. Default 5. */
  readonly threshold: number;
  /** Candidate fingerprints remembered per host (least recently seen evicted). Default 1,024. */
  readonly maxFingerprintsPerHost: number;
}

const resolveSoftOptions = defineOptions<SoftDetectorOptions>('SoftDetectorOptions', {
  threshold: numberField({ min: 2, max: 1 << 16, integer: true, default: 5 }),
  maxFingerprintsPerHost: numberField({ min: 1, max: 1 << 24, integer: true, default: 1024 }),
});

interface SoftHost {
  /** fingerprint → the keys seen with it, four lanes each (fewer than `threshold` keys). */
  readonly candidates: Map<bigint, number[]>;
  readonly templates: Set<bigint>;
}

/** Recognizes soft-404 templates: one content fingerprint shared by many URLs of a host. */
export class SoftDetector {
  /** The resolved options. */
  readonly options: Readonly<SoftDetectorOptions>;
  private readonly hosts = new Map<HostRef, SoftHost>();

  /** A detector with no template known. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<SoftDetectorOptions> | null) {
    this.options = resolveSoftOptions(options);
  }

  /** Distinct URLs sharing a fingerprint that make it a template. */
  get threshold(): number {
    return this.options.threshold;
  }

  /**
   * Records that URL key `i` of `key` on `hostKey` returned content fingerprint `fp`, and
   * reports whether `fp` is (now) a soft-404 template on the host. Repeating an observation
   * of the same URL does not count twice.
   */
  observe(hostKey: HostRef, fp: bigint, key: KeyArray, i = 0): boolean {
    checkHostRef(hostKey, 'SoftDetector.observe');
    const b = checkKeyArg(key, i, 'SoftDetector.observe');
    if (typeof fp !== 'bigint') throw new InvalidArgumentError(`SoftDetector.observe: expected fp as a bigint, received ${typeof fp}`);
    let host = this.hosts.get(hostKey);
    if (host === undefined) {
      host = { candidates: new Map(), templates: new Set() };
      this.hosts.set(hostKey, host);
    }
    if (host.templates.has(fp)) return true;
    const { candidates } = host;
    let keys = candidates.get(fp);
    if (keys === undefined) {
      keys = [];
      if (candidates.size >= this.options.maxFingerprintsPerHost) {
        const oldest = candidates.keys().next();
        if (!oldest.done) candidates.delete(oldest.value);
      }
    } else {
      candidates.delete(fp); // re-inserted below: most recently seen goes last
    }
    const k0 = key[b]!;
    const k1 = key[b + 1]!;
    const k2 = key[b + 2]!;
    const k3 = key[b + 3]!;
    let seen = false;
    for (let j = 0; j < keys.length; j += 4) {
      if (keys[j] === k0 && keys[j + 1] === k1 && keys[j + 2] === k2 && keys[j + 3] === k3) {
        seen = true;
        break;
      }
    }
    if (!seen) keys.push(k0, k1, k2, k3);
    if (keys.length / 4 >= this.options.threshold) {
      if (host.templates.size >= this.options.maxFingerprintsPerHost) {
        const oldest = host.templates.values().next();
        if (!oldest.done) host.templates.delete(oldest.value);
      }
      host.templates.add(fp);
      return true;
    }
    candidates.set(fp, keys);
    return false;
  }

  /** Whether `fp` is a confirmed soft-404 template on the host (records nothing). */
  isTemplate(hostKey: HostRef, fp: bigint): boolean {
    return this.hosts.get(hostKey)?.templates.has(fp) ?? false;
  }

  /** The confirmed templates of a host. */
  templates(hostKey: HostRef): bigint[] {
    return [...(this.hosts.get(hostKey)?.templates ?? [])];
  }

  /** Fingerprints held for a host, candidates and templates (for memory bounds and tests). */
  trackedFingerprints(hostKey: HostRef): number {
    const h = this.hosts.get(hostKey);
    return h === undefined ? 0 : h.candidates.size + h.templates.size;
  }

  /** Forgets a host (e.g. when its partition moves away). */
  forget(hostKey: HostRef): void {
    this.hosts.delete(hostKey);
  }
}
