/**
 * Host groups: the one owner of host identity inside a partition.
 *
 * A host group (a registrable domain, a host or an origin, per `FrontierOptions.grouping`) is
 * named once by src/url when a URL is keyed (`urlKey(...).hostGroup`, the HostKey's input).
 * This directory maps that name to the dense host id every other structure is indexed by,
 * remembers the registrable domain of each group (the unit of cross-site in-degree), and
 * holds imported host scores for groups not seen yet. It never derives a group from a URL
 * itself, and it never changes a host's scheduler state (banks.ts does).
 */
import { hostGroupKey } from '../url/host.js';
import type { HostGrouping } from '../model/index.js';
import type { HostRecord } from './hosts.js';

/** Host records by id and by group name, with the groups' registrable domains. */
export class HostDirectory {
  /** Host records by dense id. */
  readonly hosts: HostRecord[] = [];
  private readonly byName = new Map<string, number>();
  /** Group name → registrable domain, for in-degree under host or origin grouping. */
  private readonly domains = new Map<string, string>();
  /** Imported scores of groups not seen yet (durable: the checkpoint's scheduler state). */
  private readonly parked = new Map<string, number>();

  constructor(private readonly grouping: HostGrouping) {}

  /** The id of group `name`, or undefined when unknown. */
  id(name: string): number | undefined {
    return this.byName.get(name);
  }

  /** Appends `h` (its id must be the next dense id). Returns false when the name is taken. */
  add(h: HostRecord): boolean {
    if (this.byName.has(h.name)) return false;
    this.hosts.push(h);
    this.byName.set(h.name, h.id);
    return true;
  }

  /**
   * The registrable domain a host group belongs to. In-degree counts distinct linking
   * *domains* whatever the grouping, so `a.example.com` linking `b.example.com` under host
   * grouping is not a cross-site vote.
   */
  domainOf(group: string): string {
    if (this.grouping === 'registrable') return group;
    let d = this.domains.get(group);
    if (d === undefined) {
      try {
        d = hostGroupKey(group, 'registrable');
      } catch {
        d = group; // not a host or origin name: its own domain
      }
      this.domains.set(group, d);
    }
    return d;
  }

  /** Keeps an imported score for a group not seen yet. */
  parkScore(name: string, score: number): void {
    this.parked.set(name, score);
  }

  /** Takes (and forgets) the parked score of a group that just appeared. */
  takeScore(name: string): number | undefined {
    const s = this.parked.get(name);
    if (s !== undefined) this.parked.delete(name);
    return s;
  }

  /** The parked scores sorted by name (the checkpoint's order). */
  parkedScores(): [string, number][] {
    return [...this.parked.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
}
