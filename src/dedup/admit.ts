/**
 * Admission (DESIGN §6): the blunt, always-on trap defense. A per-host URL budget and depth
 * cap decide whether a new discovery is scheduled or parked as Trapped, without needing to
 * know why a host is exploding; a host the pattern detector flagged must in addition pass
 * the heuristics (`TrapDetector.passes`). Zero budget or zero depth cap means unlimited.
 *
 * Trapped is a parked state, not a drop: the caller keeps the row, so the URL still dedups
 * its rediscoveries, and the frontier sends it through admission again when a shorter path
 * brings it within the depth cap or a resume widens the limits (src/frontier/intake.ts). The trap-suspect flag is sticky and lives in the host record, so it survives
 * a checkpoint.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { HostFlags, UrlStatus } from '../model/index.js';

/** The fields of a host record admission reads and updates. */
export interface AdmitHost {
  /** URLs this host may have admitted; 0 = unlimited. */
  urlBudget: number;
  /** Deepest link depth admitted (seeds are depth 0); 0 = unlimited. */
  depthCap: number;
  /** URLs admitted so far (incremented by `admit`). */
  admitted: number;
  /** `HostFlags` bits. */
  flags: number;
}

/**
 * Decides a new discovery at link `depth` on `host`: Trapped when the depth passes the cap,
 * the budget is spent, or the host is a trap suspect and the URL fails the pattern
 * heuristics; otherwise Scheduled, and `host.admitted` is incremented. Call it once per new
 * URL (after the seen-set said "new"), and again only for a URL it trapped (which spent no
 * budget), never for an admitted one.
 */
export function admit(
  depth: number,
  host: AdmitHost,
  passesHeuristics: boolean,
): typeof UrlStatus.Scheduled | typeof UrlStatus.Trapped {
  if (typeof depth !== 'number' || !(depth >= 0)) {
    throw new InvalidArgumentError(`admit: expected depth as a non-negative number, received ${String(depth)}`);
  }
  if (host.depthCap > 0 && depth > host.depthCap) return UrlStatus.Trapped;
  if (host.urlBudget > 0 && host.admitted >= host.urlBudget) return UrlStatus.Trapped;
  if ((host.flags & HostFlags.TrapSuspect) !== 0 && !passesHeuristics) return UrlStatus.Trapped;
  host.admitted++;
  return UrlStatus.Scheduled;
}

/** Sets the sticky trap-suspect flag on a host record. */
export function flagTrapSuspect(host: { flags: number }): void {
  host.flags |= HostFlags.TrapSuspect;
}

/** Whether the host record carries the trap-suspect flag. */
export function isTrapSuspect(host: { readonly flags: number }): boolean {
  return (host.flags & HostFlags.TrapSuspect) !== 0;
}
