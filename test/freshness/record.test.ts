import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { LM_UNTRUSTED, defaultParams, estimate, firstFetchAge, freshnessParams, lastModifiedExposure, newFreshnessRecord, observeChange } from '../../src/freshness/index.js';
import type { Outcome } from '../../src/model/index.js';

const FP_A = 0x0123456789abcdefn;
const FP_B = 0xfedcba9876543210n;
const SH = 0xaaaa5555aaaa5555n;

const ok = (contentFp: bigint, simhash: bigint, lastModified?: number): Outcome => ({ row: 0, url: 'https://a.example/', status: 200, contentFp, simhash, lastModified });
const notModified: Outcome = { row: 0, url: 'https://a.example/', status: 304 };

describe('observeChange', () => {
  it('never counts a first fetch as a change, and seeds the comparison', () => {
    const r = newFreshnessRecord();
    expect(observeChange(r, ok(FP_A, SH), 100)).toBe(false);
    expect(r).toMatchObject({ crawlCount: 1, changeCount: 0, noChangeStreak: 0, firstCrawled: 100, lastCrawled: 100 });
    expect(r.contentFpLo).toBe(0x89abcdef);
    expect(r.contentFpHi).toBe(0x01234567);
  });

  it('follows the trust order: 304, equal fingerprint, cosmetic simhash, real change', () => {
    const r = newFreshnessRecord();
    observeChange(r, ok(FP_A, SH), 0);
    expect(observeChange(r, notModified, 10)).toBe(false);
    expect(observeChange(r, ok(FP_A, SH), 20)).toBe(false);
    expect(r.noChangeStreak).toBe(2);
    // Different bytes, simhash 3 bits away: cosmetic.
    expect(observeChange(r, ok(FP_B, SH ^ 0b10101n), 30)).toBe(false);
    expect(r.noChangeStreak).toBe(3);
    // 4 bits away from the stored (now cosmetic) simhash: a real change.
    expect(observeChange(r, ok(FP_A, SH ^ 0b10101n ^ 0xf000000000000000n), 40)).toBe(true);
    expect(r).toMatchObject({ crawlCount: 5, changeCount: 1, noChangeStreak: 0, lastCrawled: 40 });
  });

  it('honours a custom simhash threshold', () => {
    const r = newFreshnessRecord();
    const params = freshnessParams({ simhashNearDupThreshold: 0 });
    observeChange(r, ok(FP_A, SH), 0, params);
    expect(observeChange(r, ok(FP_B, SH ^ 1n), 1, params)).toBe(true);
  });

  it('treats a differing fingerprint without simhash as a change', () => {
    const r = newFreshnessRecord();
    observeChange(r, { ...ok(FP_A, SH), simhash: undefined }, 0);
    expect(observeChange(r, { ...ok(FP_B, SH), simhash: undefined }, 1)).toBe(true);
  });

  it('keeps the stored fingerprint across a 304 and leaves timestamps alone without nowHours', () => {
    const r = newFreshnessRecord();
    observeChange(r, ok(FP_A, SH), 5);
    observeChange(r, notModified);
    expect(r.lastCrawled).toBe(5);
    expect(r.contentFpLo).toBe(0x89abcdef);
    expect(observeChange(r, ok(FP_A, SH))).toBe(false);
    expect(r.lmHours).toBe(LM_UNTRUSTED);
  });

  it('saturates the u16 streak', () => {
    const r = newFreshnessRecord({ crawlCount: 70000, noChangeStreak: 65535, contentFpLo: 1 });
    observeChange(r, notModified);
    expect(r.noChangeStreak).toBe(65535);
  });

  describe('Last-Modified trust', () => {
    const H = 3600;
    const start = (): ReturnType<typeof newFreshnessRecord> => {
      const r = newFreshnessRecord();
      observeChange(r, ok(FP_A, SH, 50 * H), 100);
      return r;
    };

    it('accumulates exposure while consistent: whole intervals unchanged, time-since-change when changed', () => {
      const r = start();
      expect(r.lmHours).toBe(0);
      observeChange(r, ok(FP_A, SH, 50 * H), 124); // unchanged, date unchanged: +24
      observeChange(r, notModified, 148); // +24
      observeChange(r, ok(FP_B, ~SH & 0xffffffffffffffffn, 160 * H), 172); // changed at 160: +12
      expect(r.lmHours).toBe(60);
      expect(r.lastModified).toBe(160 * H);
    });

    it('is refused when absent or not in the past on the first fetch', () => {
      const r = newFreshnessRecord();
      observeChange(r, ok(FP_A, SH), 100);
      expect(r.lmHours).toBe(LM_UNTRUSTED);
      const q = newFreshnessRecord();
      observeChange(q, ok(FP_A, SH, 100 * H), 100);
      expect(q.lmHours).toBe(LM_UNTRUSTED);
    });

    it.each([
      ['a date that moves on unchanged content (stamped per response)', ok(FP_A, SH, 120 * H)],
      ['a change without a new date', ok(FP_B, ~SH & 0xffffffffffffffffn, 50 * H)],
      ['a change dated before our previous fetch', ok(FP_B, ~SH & 0xffffffffffffffffn, 90 * H)],
      ['a date in the future', ok(FP_B, ~SH & 0xffffffffffffffffn, 200 * H)],
      ['a change dated at the fetch itself (the response time)', ok(FP_B, ~SH & 0xffffffffffffffffn, 120 * H)],
      ['a date that moves backwards on unchanged content', ok(FP_A, SH, 40 * H)],
      ['a missing date on a 200', ok(FP_B, ~SH & 0xffffffffffffffffn)],
      ['a date that moves on cosmetic churn', ok(FP_B, SH ^ 1n, 110 * H)],
    ])('is withdrawn for good after %s', (_why, outcome) => {
      const r = start();
      observeChange(r, outcome, 120);
      expect(r.lmHours).toBe(LM_UNTRUSTED);
      observeChange(r, ok(FP_A, SH, 130 * H), 140);
      expect(r.lmHours).toBe(LM_UNTRUSTED);
    });
  });

  it('refuses outcomes that are not a 2xx or a 304', () => {
    const r = newFreshnessRecord();
    expect(() => observeChange(r, { row: 0, url: 'https://a.example/x', status: 404 })).toThrow(/status 404 for https:\/\/a\.example\/x/);
    expect(() => observeChange(r, { row: 0, url: 'u', status: 0 })).toThrow(InvalidArgumentError);
    expect(r.crawlCount).toBe(0);
  });

  it('uses the default params when none are given', () => {
    expect(defaultParams().simhashNearDupThreshold).toBe(3);
  });
});

describe('the first fetch\'s Last-Modified age', () => {
  it('firstFetchAge: hours from the date to the fetch, 0 when there is no usable date', () => {
    expect(firstFetchAge(100 * 3600, 130)).toBe(30);
    expect(firstFetchAge(100 * 3600 + 1800, 130.25)).toBeCloseTo(29.75, 12);
    expect(firstFetchAge(undefined, 130)).toBe(0);
    expect(firstFetchAge(0, 130)).toBe(0);
    expect(firstFetchAge(130 * 3600, 130)).toBe(0); // dated at the fetch itself: a stamping server
    expect(firstFetchAge(131 * 3600, 130)).toBe(0); // dated after it
    expect(firstFetchAge(100 * 3600, undefined)).toBe(0);
    expect(firstFetchAge(Number.NaN, 130)).toBe(0);
  });

  it('starts the trust test exactly when it gives an age (one rule for both)', () => {
    for (const [lm, now] of [[100 * 3600, 130], [130 * 3600, 130], [0, 130], [131 * 3600, 130]] as const) {
      expect(lastModifiedExposure(7, 'first', 0, lm, 0, now, false) === 0).toBe(firstFetchAge(lm, now) > 0);
    }
  });

  it('observeChange keeps it from the first fetch only, and leaves it through later fetches', () => {
    const r = newFreshnessRecord();
    observeChange(r, ok(FP_A, SH, 100 * 3600), 400);
    expect(r.lmAgeHours).toBe(300);
    expect(r.lmHours).toBe(0);
    observeChange(r, ok(FP_A, SH, 100 * 3600), 410); // unchanged, same date: trusted
    observeChange(r, ok(FP_B, SH ^ 0xffffn, 415 * 3600), 420); // changed, dated after the previous fetch
    expect(r.lmAgeHours).toBe(300);
    expect(r.lmHours).toBe(15); // 10 quiet hours, then 5 after the dated change
    // A stamping server: the age is kept, but the dates are never trusted, so nothing reads it.
    const s = newFreshnessRecord();
    observeChange(s, ok(FP_A, SH, 399 * 3600), 400);
    observeChange(s, ok(FP_A, SH, 410 * 3600), 410.5);
    expect(s.lmHours).toBe(LM_UNTRUSTED);
    // An undated first response: no age.
    const u = newFreshnessRecord();
    observeChange(u, ok(FP_A, SH), 400);
    expect(u.lmAgeHours).toBe(0);
  });

  it('takes a date less than a minute before the fetch for a stamp, not a change', () => {
    expect(firstFetchAge(400 * 3600 - 30, 400)).toBe(0);
    expect(firstFetchAge(400 * 3600 - 120, 400)).toBeCloseTo(2 / 60, 12);
    // A page that changes at every fetch, on a server stamping each response 2 s before our
    // report: before this rule its dates passed every test with a quiet of seconds, and the
    // estimate went to maxRate after two changes. Now the first response starts no test.
    const r = newFreshnessRecord();
    for (let k = 0; k < 6; k++) {
      const now = 400 + 24 * k;
      observeChange(r, ok(k % 2 === 0 ? FP_A : FP_B, k % 2 === 0 ? SH : SH ^ 0xffffn, now * 3600 - 2), now);
    }
    expect(r.changeCount).toBe(5);
    expect(r.lmHours).toBe(LM_UNTRUSTED);
    expect(r.lmAgeHours).toBe(0);
    expect(estimate(r, defaultParams())).toBeLessThan(defaultParams().maxRate / 4);
    // With the response's Date the server's own clock decides: a stamping server whose clock runs
    // five minutes behind ours is still a stamp, and an honest one's age is read on its clock.
    expect(firstFetchAge(400 * 3600 - 300, 400)).toBeCloseTo(300 / 3600, 12); // our clock: looks 5 minutes old
    expect(firstFetchAge(400 * 3600 - 300, 400, 400 * 3600 - 300)).toBe(0); // its Date says: stamped
    expect(firstFetchAge(400 * 3600 - 7800, 400, 400 * 3600 - 600)).toBeCloseTo(2, 12); // 2 h on its clock, not 2 h 10 min
    expect(lastModifiedExposure(7, 'first', 0, 400 * 3600 - 300, 0, 400, false, 400 * 3600 - 300)).toBe(LM_UNTRUSTED);
    const skewed = newFreshnessRecord();
    for (let k = 0; k < 6; k++) {
      const now = 400 + 24 * k;
      const at = now * 3600 - 300; // the server's clock
      observeChange(skewed, { ...ok(k % 2 === 0 ? FP_A : FP_B, k % 2 === 0 ? SH : SH ^ 0xffffn, at - 1), serverDate: at }, now);
    }
    expect(skewed.changeCount).toBe(5);
    expect(skewed.lmHours).toBe(LM_UNTRUSTED);
    expect(skewed.lmAgeHours).toBe(0);
    // A later change is dated on the server's clock too: one whose clock runs ten minutes ahead
    // of ours dates a change two minutes before its Date, eight minutes "after" our fetch —
    // withdrawn on our clock, two minutes of quiet on its own.
    const ahead = newFreshnessRecord();
    observeChange(ahead, { ...ok(FP_A, SH, 100 * 3600), serverDate: 400 * 3600 + 600 }, 400);
    observeChange(ahead, { ...ok(FP_B, SH ^ 0xffffn, 424 * 3600 + 480), serverDate: 424 * 3600 + 600 }, 424);
    expect(ahead.lmHours).toBeCloseTo(2 / 60, 9);
    const ours = newFreshnessRecord();
    observeChange(ours, ok(FP_A, SH, 100 * 3600), 400);
    observeChange(ours, ok(FP_B, SH ^ 0xffffn, 424 * 3600 + 480), 424);
    expect(ours.lmHours).toBe(LM_UNTRUSTED);
    // Later fetches are not judged so: an honest change dated seconds before a later fetch counts.
    const h = newFreshnessRecord();
    observeChange(h, ok(FP_A, SH, 100 * 3600), 400);
    observeChange(h, ok(FP_B, SH ^ 0xffffn, 424 * 3600 - 10), 424);
    expect(h.lmHours).toBeCloseTo(10 / 3600, 9);
  });
});

