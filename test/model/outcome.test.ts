// The outcome vocabulary (issue 15): one class per answer, one transition table, and the
// "429 / 0 / 5xx / no HTTP status is transient" rule stated once and read by politeness and the frontier alike.
import { describe, expect, it } from 'vitest';
import {
  Frontier,
  OUTCOME_TRANSITIONS,
  OutcomeClass,
  UrlStatus,
  classOfOutcome,
  isThrottle,
  isTransientStatus,
  outcomeClass,
} from '../../src/index.js';
import type { FetchErrorKind } from '../../src/index.js';
import { OUTAGE_GRACE_MS } from '../../src/frontier/outcome.js';

const CASES: [number, FetchErrorKind | undefined, OutcomeClass][] = [
  [200, undefined, 'ok'],
  [204, undefined, 'ok'],
  [299, undefined, 'ok'],
  // No final HTTP status (RFC 9110 §15: 100–599, 1xx interim): a refusal, retried as a 5xx is.
  [100, undefined, 'transient'],
  [199, undefined, 'transient'],
  [600, undefined, 'transient'],
  [999, undefined, 'transient'],
  [304, undefined, 'notModified'],
  [301, undefined, 'redirect'],
  [308, undefined, 'redirect'],
  [399, undefined, 'redirect'],
  [429, undefined, 'transient'],
  [500, undefined, 'transient'],
  [503, undefined, 'transient'],
  [599, undefined, 'transient'],
  [0, undefined, 'transient'],
  [0, 'timeout', 'transient'],
  [0, 'connect', 'transient'],
  [0, 'dns', 'transient'],
  [0, 'url', 'gone'],
  [0, 'refused', 'gone'],
  [400, undefined, 'gone'],
  [404, undefined, 'gone'],
  [410, undefined, 'gone'],
  [499, undefined, 'gone'],
  [200, 'body', 'ok'],
];

describe('outcomeClass', () => {
  it.each(CASES)('status %i, errorKind %s → %s', (status, kind, cls) => {
    expect(outcomeClass(status, kind)).toBe(cls);
  });

  it('robots disallowance is a flag of the outcome, whatever the status', () => {
    expect(classOfOutcome({ status: 200, robotsDisallowed: true })).toBe(OutcomeClass.Disallowed);
    expect(classOfOutcome({ status: 503, robotsDisallowed: false })).toBe(OutcomeClass.Transient);
  });

  it('the transient rule is one rule: politeness throttles exactly on transient statuses', () => {
    for (let s = 0; s < 700; s++) {
      expect(isThrottle(s)).toBe(isTransientStatus(s));
      expect(isTransientStatus(s)).toBe(s === 0 || s === 429 || s >= 500 || s < 200);
    }
  });

  it('every class has one transition, naming a URL status', () => {
    const names = Object.values(OutcomeClass);
    expect(Object.keys(OUTCOME_TRANSITIONS).sort()).toEqual([...names].sort());
    expect(OUTCOME_TRANSITIONS.ok).toMatchObject({ to: UrlStatus.Crawled, crawl: true, content: true });
    expect(OUTCOME_TRANSITIONS.notModified).toMatchObject({ to: UrlStatus.Crawled, crawl: true, content: false });
    expect(OUTCOME_TRANSITIONS.redirect).toMatchObject({ to: UrlStatus.Redirected, follow: true });
    expect(OUTCOME_TRANSITIONS.transient).toMatchObject({ to: UrlStatus.RetryWait, retry: true });
    expect(OUTCOME_TRANSITIONS.gone.to).toBe(UrlStatus.Gone);
    expect(OUTCOME_TRANSITIONS.disallowed.to).toBe(UrlStatus.Disallowed);
    expect(Object.isFrozen(OUTCOME_TRANSITIONS) && Object.isFrozen(OUTCOME_TRANSITIONS.ok)).toBe(true);
  });
});

describe("the frontier's state machine follows the table", () => {
  it.each(CASES)('status %i, errorKind %s', (status, errorKind, cls) => {
    const f = new Frontier(1, 0, { stateMachine: true, retryLimit: 1 });
    f.seed('https://a.example/x', 'a.example', 1, 0, 0);
    const r = f.dispatch(0)!;
    expect(f.report({ row: r.row, url: r.url, status, errorKind }, 0)).toBe(true);
    const tr = OUTCOME_TRANSITIONS[cls];
    const after = f.stats(0).byStatus;
    const want = tr.crawl ? 'Crawled' : tr.follow ? 'Redirected' : tr.retry ? 'RetryWait' : cls === 'gone' ? 'Gone' : 'Disallowed';
    expect(after[want]).toBe(1);
    if (tr.retry) {
      // The retry limit is the table's "then Gone" — asked past the outage grace, since a refused
      // connection within an hour of the host's first spends no retry (OUTAGE_GRACE_MS; test/politeness/outage.test.ts).
      let now = OUTAGE_GRACE_MS;
      if (status === 429) {
        // A 429 within a rate limit already going spares its URL (src/frontier/blocks.ts
        // `heardLimit`); one that starts a limit spends: the host serves another URL between them.
        f.seed('https://a.example/y', 'a.example', 1, 0, 0);
        let other = f.dispatch(now);
        while (other === undefined) other = f.dispatch((now = f.nextEligible()!));
        expect(other.url).toBe('https://a.example/y');
        f.report({ row: other.row, url: other.url, status: 200 }, now);
      }
      let again = f.dispatch(now);
      while (again === undefined) again = f.dispatch((now = f.nextEligible()!));
      f.report({ row: again.row, url: again.url, status, errorKind }, now);
      expect(f.stats(0).byStatus['Gone']).toBe(1);
    }
    f.free();
  });
});
