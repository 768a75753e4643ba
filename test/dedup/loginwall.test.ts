import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LoginWalls, churnFp, simhashText, wallRecordProblem, wallScopeOf } from '../../src/index.js';

const O = 'https://forum.example';
const FORM_TEXT = 'Login. The board requires you to be registered and logged in to view this page. Username Password Remember me Forgot password';
const form = { loginForm: true, simhash: simhashText(FORM_TEXT), mainFp: churnFp('The board requires you to be registered and logged in to view this page.') };
const content = (text: string) => ({ loginForm: false, simhash: simhashText(text), mainFp: churnFp(text) });

describe('LoginWalls', () => {
  it('walls a path once five distinct URLs answered one login form; the same URL again counts once; the query is set aside', () => {
    const w = new LoginWalls();
    const changes: unknown[] = [];
    for (let i = 0; i < 4; i++) changes.push(w.observe(`${O}/posting.php?mode=quote&p=${i}`, form), w.observe(`${O}/posting.php?mode=quote&p=${i}`, form));
    expect(changes.every((c) => c === undefined)).toBe(true);
    expect(w.walled(`${O}/posting.php?mode=reply&t=9`)).toBeUndefined();
    expect(w.observe(`${O}/posting.php?mode=post&f=1`, form)).toBe('walled');
    expect(w.walled(`${O}/posting.php?mode=reply&t=9`)).toBe(`${O}/posting.php`);
    expect(w.walled(`${O}/posting.php`)).toBe(`${O}/posting.php`);
    expect(w.walled(`${O}/viewtopic.php?p=1`)).toBeUndefined();
    expect(w.walled('https://other.example/posting.php?p=1')).toBeUndefined();
    expect(w.learned()).toEqual([`${O}/posting.php`]);
  });

  it('refuses a walled path\'s URLs but every 32nd, let through as a check; a check that shows content lifts the wall', () => {
    const w = new LoginWalls();
    for (let i = 0; i < 5; i++) w.observe(`${O}/posting.php?p=${i}`, form);
    const refused = Array.from({ length: 64 }, (_, i) => w.refuse(`${O}/posting.php?p=${100 + i}`));
    expect(refused.filter((r) => !r)).toHaveLength(2);
    expect(refused.indexOf(false)).toBe(31);
    expect(w.refuse(`${O}/viewtopic.php?p=1`)).toBe(false);
    // The check shows the same form: the wall holds. Then it shows a draft: lifted, and banned.
    expect(w.observe(`${O}/posting.php?p=131`, form)).toBeUndefined();
    expect(w.observe(`${O}/posting.php?p=163`, content('A draft shown to a visitor, with words of its own'))).toBe('lifted');
    expect(w.walled(`${O}/posting.php?p=1`)).toBeUndefined();
    expect(w.refuse(`${O}/posting.php?p=1`)).toBe(false);
    expect(w.export()).toEqual([[`${O}/posting.php`, false]]);
    // Another login text lifts it too (a second form under the path).
    const two = new LoginWalls();
    for (let i = 0; i < 5; i++) two.observe(`${O}/ucp.php?mode=login&i=${i}`, form);
    expect(two.observe(`${O}/ucp.php?mode=register`, { loginForm: true, simhash: simhashText('Register an account: username, e-mail, password, confirm password, I agree to the terms'), mainFp: churnFp('Register') })).toBe('lifted');
  });

  it('a path that showed content first is never walled and leaves no record; one with evidence is banned and kept', () => {
    const w = new LoginWalls();
    w.observe(`${O}/item.php?id=0`, content('A real item page with its own words'));
    for (let i = 1; i < 20; i++) expect(w.observe(`${O}/item.php?id=${i}`, form)).toBeUndefined();
    expect(w.walled(`${O}/item.php?id=99`)).toBeUndefined();
    expect(w.export()).toEqual([]);
    for (let i = 0; i < 3; i++) w.observe(`${O}/shop.php?id=${i}`, form);
    w.observe(`${O}/shop.php?id=3`, content('A product'));
    for (let i = 4; i < 20; i++) w.observe(`${O}/shop.php?id=${i}`, form);
    expect(w.export()).toEqual([[`${O}/shop.php`, false]]);
  });

  it('texts of their own, or main texts that differ, are no wall', () => {
    const header = new LoginWalls();
    for (let i = 0; i < 20; i++) header.observe(`${O}/topic.php?t=${i}`, { loginForm: true, simhash: simhashText(`Topic ${i}: ${'lorem ipsum '.repeat(i % 5)} words of its own number ${i * 7919} and more ${i}`) });
    expect(header.learned()).toEqual([]);
    // The same visible text, a different main text: no agreement (the main text is compared too).
    const main = new LoginWalls();
    main.observe(`${O}/a.php?i=0`, form);
    for (let i = 1; i < 10; i++) main.observe(`${O}/a.php?i=${i}`, { ...form, mainFp: churnFp(`notice ${i}`) });
    expect(main.learned()).toEqual([]);
  });

  it('a page without text (no simhash, or 0) is no evidence either way', () => {
    const w = new LoginWalls();
    for (let i = 0; i < 10; i++) w.observe(`${O}/a.php?i=${i}`, { loginForm: true, simhash: undefined });
    for (let i = 0; i < 10; i++) w.observe(`${O}/a.php?z=${i}`, { loginForm: true, simhash: 0n });
    w.observe(`${O}/a.php?i=x`, { loginForm: false, simhash: simhashText('') });
    // None of those counted, nor banned: the fifth form now walls the path, not an earlier one.
    const changes = Array.from({ length: 5 }, (_, i) => w.observe(`${O}/a.php?j=${i}`, form));
    expect(changes).toEqual([undefined, undefined, undefined, undefined, 'walled']);
  });

  it('export and import keep walls and bans; a ban wins; a wall read back lifts on a check with content; bad records are refused', () => {
    const w = new LoginWalls();
    for (let i = 0; i < 5; i++) w.observe(`${O}/posting.php?p=${i}`, form);
    for (let i = 0; i < 2; i++) w.observe(`${O}/item.php?id=${i}`, form);
    w.observe(`${O}/item.php?id=2`, content('An item'));
    const records = w.export();
    expect(records).toEqual([[`${O}/posting.php`, true], [`${O}/item.php`, false]]);
    const back = new LoginWalls();
    back.import(records);
    expect(back.walled(`${O}/posting.php?p=77`)).toBe(`${O}/posting.php`);
    expect(back.observe(`${O}/posting.php?p=78`, form)).toBeUndefined();
    expect(back.observe(`${O}/posting.php?p=79`, content('A draft'))).toBe('lifted');
    for (let i = 0; i < 5; i++) back.observe(`${O}/item.php?id=${i + 10}`, form);
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
      w.observe(`${O}/p${i}.php?a=1`, form);
      w.observe(`${O}/p${i}.php?a=2`, form);
      w.observe(`${O}/q${i}.php?a=1`, form);
      w.observe(`${O}/r${i}.php?a=1`, form);
      w.observe(`${O}/r${i}.php?a=2`, content('content'));
    }
    expect(w.learned()).toHaveLength(16);
    expect(w.export().length).toBe(32);
    expect(w.walled(`${O}/p999.php?z`)).toBe(`${O}/p999.php`);
    expect(w.walled(`${O}/p0.php?z`)).toBeUndefined();
    expect(wallScopeOf(`${O}/a/b.php?x=1#y`)).toBe(`${O}/a/b.php`);
    expect(() => new LoginWalls({ minEvidence: 1 })).toThrow(InvalidArgumentError);
    expect(() => new LoginWalls({ checkEvery: 1 })).toThrow(InvalidArgumentError);
    expect(() => w.observe(5 as unknown as string, form)).toThrow(/URL string/);
    expect(() => w.observe(`${O}/`, { loginForm: true, simhash: 5 as unknown as bigint })).toThrow(InvalidArgumentError);
    expect(() => w.observe(`${O}/`, null as unknown as typeof form)).toThrow(InvalidArgumentError);
  });
});
