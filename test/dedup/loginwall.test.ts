import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LoginWalls, simhashText, wallRecordProblem, wallScopeOf } from '../../src/index.js';

const O = 'https://forum.example';
const form = simhashText('Login. The board requires you to be registered and logged in to view this page. Username Password Remember me Forgot password');

describe('LoginWalls', () => {
  it('walls a path once five distinct URLs answered one login form; the same URL again counts once; the query is set aside', () => {
    const w = new LoginWalls();
    const learned: boolean[] = [];
    for (let i = 0; i < 4; i++) learned.push(w.observe(`${O}/posting.php?mode=quote&p=${i}`, true, form), w.observe(`${O}/posting.php?mode=quote&p=${i}`, true, form));
    expect(learned.some(Boolean)).toBe(false);
    expect(w.walled(`${O}/posting.php?mode=reply&t=9`)).toBeUndefined();
    expect(w.observe(`${O}/posting.php?mode=post&f=1`, true, form)).toBe(true);
    expect(w.walled(`${O}/posting.php?mode=reply&t=9`)).toBe(`${O}/posting.php`);
    expect(w.walled(`${O}/posting.php`)).toBe(`${O}/posting.php`);
    expect(w.walled(`${O}/viewtopic.php?p=1`)).toBeUndefined();
    expect(w.walled('https://other.example/posting.php?p=1')).toBeUndefined();
    expect(w.learned()).toEqual([`${O}/posting.php`]);
  });

  it('a page of the path with no password field, or another text, bans it (and unlearns a wall)', () => {
    const content = new LoginWalls();
    for (let i = 0; i < 3; i++) content.observe(`${O}/item.php?id=${i}`, true, form);
    content.observe(`${O}/item.php?id=3`, false, simhashText('A real item page with its own words'));
    for (let i = 4; i < 20; i++) expect(content.observe(`${O}/item.php?id=${i}`, true, form)).toBe(false);
    expect(content.walled(`${O}/item.php?id=99`)).toBeUndefined();
    // A header login box on pages of their own: each text differs, so no wall.
    const header = new LoginWalls();
    for (let i = 0; i < 20; i++) header.observe(`${O}/topic.php?t=${i}`, true, simhashText(`Topic ${i}: ${'lorem ipsum '.repeat(i % 5)} words of its own number ${i * 7919} and more ${i}`));
    expect(header.learned()).toEqual([]);
    // Learned, then contradicted by a page in flight: unlearned and banned.
    const late = new LoginWalls();
    for (let i = 0; i < 5; i++) late.observe(`${O}/posting.php?p=${i}`, true, form);
    expect(late.learned()).toHaveLength(1);
    late.observe(`${O}/posting.php?p=99`, false, simhashText('a draft shown to a visitor'));
    expect(late.walled(`${O}/posting.php?p=100`)).toBeUndefined();
    expect(late.export()).toEqual([[`${O}/posting.php`, false]]);
  });

  it('a page without text is no evidence either way', () => {
    const w = new LoginWalls();
    for (let i = 0; i < 10; i++) w.observe(`${O}/a.php?i=${i}`, true, undefined);
    w.observe(`${O}/a.php?i=x`, false, undefined);
    for (let i = 0; i < 5; i++) w.observe(`${O}/a.php?j=${i}`, true, form);
    expect(w.learned()).toEqual([`${O}/a.php`]);
  });

  it('export and import keep walls and bans; a ban wins; bad records are refused', () => {
    const w = new LoginWalls();
    for (let i = 0; i < 5; i++) w.observe(`${O}/posting.php?p=${i}`, true, form);
    w.observe(`${O}/item.php?id=1`, false, form);
    const records = w.export();
    expect(records).toEqual([[`${O}/posting.php`, true], [`${O}/item.php`, false]]);
    const back = new LoginWalls();
    back.import(records);
    expect(back.walled(`${O}/posting.php?p=77`)).toBe(`${O}/posting.php`);
    for (let i = 0; i < 5; i++) back.observe(`${O}/item.php?id=${i + 10}`, true, form);
    expect(back.walled(`${O}/item.php?id=1`)).toBeUndefined();
    const banFirst = new LoginWalls();
    banFirst.import([[`${O}/x.php`, false], [`${O}/x.php`, true]]);
    expect(banFirst.learned()).toEqual([]);
    expect(wallRecordProblem([`${O}/posting.php?p=1`, true])).toMatch(/without a query/);
    expect(wallRecordProblem(['ftp://x/a', true])).toMatch(/http/);
    expect(wallRecordProblem([`${O}/a`, 'yes'])).toMatch(/true or false/);
    expect(wallRecordProblem('x')).toMatch(/record/);
    expect(() => back.import([[`${O}/a?b`, true]])).toThrow(InvalidArgumentError);
  });

  it('bounds what it remembers, and validates its arguments', () => {
    const w = new LoginWalls({ maxScopes: 16, minEvidence: 2 });
    for (let i = 0; i < 1000; i++) {
      w.observe(`${O}/p${i}.php?a=1`, true, form);
      w.observe(`${O}/p${i}.php?a=2`, true, form);
      w.observe(`${O}/q${i}.php?a=1`, true, form);
      w.observe(`${O}/r${i}.php?a=1`, false, form);
    }
    expect(w.learned()).toHaveLength(16);
    expect(w.export().length).toBe(32);
    expect(w.walled(`${O}/p999.php?z`)).toBe(`${O}/p999.php`);
    expect(w.walled(`${O}/p0.php?z`)).toBeUndefined();
    expect(wallScopeOf(`${O}/a/b.php?x=1#y`)).toBe(`${O}/a/b.php`);
    expect(() => new LoginWalls({ minEvidence: 1 })).toThrow(InvalidArgumentError);
    expect(() => w.observe(5 as unknown as string, true, form)).toThrow(/URL string/);
    expect(() => w.observe(`${O}/`, true, 5 as unknown as bigint)).toThrow(/bigint/);
  });
});
