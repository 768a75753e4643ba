/**
 * The record view the freshness hook reads (`CrawledRecord`): one reused object per frontier
 * over the URL table's columns, bound to a row for the duration of one call, so a recrawl
 * allocates nothing per URL. It is bound only to a row just reported, which has a fetch-state
 * slot (src/frontier/table.ts): the fetch-state getters and setters go through it.
 */
import type { CrawledRecord } from './options.js';
import type { UrlTable } from './table.js';

/** The reusable record view handed to the freshness hook (valid during the call only). */
export class MutableRecord implements CrawledRecord {
  row = 0;
  /** The row's fetch-state slot (never 0 while bound: the report took one). */
  slot = 0;
  change: CrawledRecord['change'] = 'first';
  hostIntervalMs = 0;
  hostCapPerHour = Number.POSITIVE_INFINITY;
  status = 0;
  fetchedAtHours = 0;
  previousCrawled = 0;
  previousLastModified = 0;
  sentLastModified = 0;
  sentDate = 0;
  constructor(private readonly t: UrlTable) {}
  bind(
    row: number,
    change: CrawledRecord['change'],
    hostIntervalMs: number,
    hostCapPerHour: number,
    status: number,
    fetchedAtHours: number,
    previousCrawled: number,
    previousLastModified: number,
    sentLastModified: number,
    sentDate: number,
  ): this {
    this.row = row;
    this.slot = this.t.slotFor(row);
    this.change = change;
    this.hostIntervalMs = hostIntervalMs;
    this.hostCapPerHour = hostCapPerHour;
    this.status = status;
    this.fetchedAtHours = fetchedAtHours;
    this.previousCrawled = previousCrawled;
    this.previousLastModified = previousLastModified;
    this.sentLastModified = sentLastModified;
    this.sentDate = sentDate;
    return this;
  }
  get host(): number {
    return this.t.host[this.row]!;
  }
  get firstCrawled(): number {
    return this.t.firstCrawled[this.slot]!;
  }
  set firstCrawled(v: number) {
    if (Number.isInteger(v) && v >= 0 && v <= this.t.lastCrawled[this.slot]!) this.t.firstCrawled[this.slot] = v;
  }
  get lmHours(): number {
    return this.t.lmHours[this.slot]!;
  }
  set lmHours(v: number) {
    if (Number.isFinite(v) && v >= -1) this.t.lmHours[this.slot] = v;
  }
  get lmAgeHours(): number {
    return this.t.lmAgeHours[this.slot]!;
  }
  set lmAgeHours(v: number) {
    if (Number.isFinite(v) && v >= 0) this.t.lmAgeHours[this.slot] = v;
  }
  get unchangedHours(): number {
    return this.t.unchangedHours[this.slot]!;
  }
  set unchangedHours(v: number) {
    this.t.unchangedHours[this.slot] = v;
  }
  get changedLogHours(): number {
    return this.t.changedLogHours[this.slot]!;
  }
  set changedLogHours(v: number) {
    this.t.changedLogHours[this.slot] = v;
  }
  get url(): string {
    return this.t.urlOf(this.row);
  }
  get firstSeen(): number {
    return this.t.firstSeen[this.row]!;
  }
  get lastCrawled(): number {
    return this.t.lastCrawled[this.slot]!;
  }
  get lastChanged(): number {
    return this.t.lastChanged[this.slot]!;
  }
  get crawlCount(): number {
    return this.t.crawlCount[this.slot]!;
  }
  set crawlCount(v: number) {
    if (Number.isInteger(v) && v >= 1 && v <= 0xffff) this.t.crawlCount[this.slot] = v;
  }
  get changeCount(): number {
    return this.t.changeCount[this.slot]!;
  }
  set changeCount(v: number) {
    if (Number.isInteger(v) && v >= 0 && v <= 0xffff) this.t.changeCount[this.slot] = v;
  }
  get noChangeStreak(): number {
    return this.t.noChangeStreak[this.slot]!;
  }
  set noChangeStreak(v: number) {
    if (Number.isInteger(v) && v >= 0 && v <= 0xffff) this.t.noChangeStreak[this.slot] = v;
  }
  get priority(): number {
    return this.t.priority[this.row]!;
  }
  get nextDue(): number {
    return this.t.nextDue[this.row]!;
  }
  get lastModified(): number {
    return this.t.lastModified[this.slot]!;
  }
  get contentFpLo(): number {
    return this.t.contentFp[this.slot * 2]!;
  }
  get contentFpHi(): number {
    return this.t.contentFp[this.slot * 2 + 1]!;
  }
  get simhashLo(): number {
    return this.t.simhash[this.slot * 2]!;
  }
  get simhashHi(): number {
    return this.t.simhash[this.slot * 2 + 1]!;
  }
  get spreadKey(): number {
    return this.t.key[this.row * 4 + 2]!;
  }
  get lambda(): number {
    return this.t.lambda[this.slot]!;
  }
  set lambda(v: number) {
    if (Number.isFinite(v) && v >= 0) this.t.lambda[this.slot] = v;
  }
}
