import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../src/errors/index.js';
import { booleanField, customField, defineOptions, enumField, functionField, numberField, stringField } from '../src/options/index.js';

interface Opts {
  intervalMs: number;
  floorMs: number;
  name: string;
  label: string | undefined;
  mode: 'a' | 'b';
  strict: boolean;
  clock: () => number;
  tags: readonly string[];
}

const validate = defineOptions<Opts>(
  'TestOptions',
  {
    intervalMs: numberField({ min: 0, default: 1000 }),
    floorMs: numberField({ above: 0, integer: true, default: 250 }),
    name: stringField({ default: 'x', nonEmpty: true }),
    label: stringField({}),
    mode: enumField(['a', 'b'] as const, 'a'),
    strict: booleanField(false),
    clock: functionField(() => 0),
    tags: customField('an array of strings', (v): v is readonly string[] => Array.isArray(v) && v.every((t) => typeof t === 'string'), () => []),
  },
  (o) => (o.floorMs > o.intervalMs ? `floorMs (${o.floorMs}) must not exceed intervalMs (${o.intervalMs})` : undefined),
);

describe('defineOptions', () => {
  it('fills defaults and freezes the result', () => {
    const o = validate();
    expect(o).toMatchObject({ intervalMs: 1000, floorMs: 250, name: 'x', label: undefined, mode: 'a', strict: false, tags: [] });
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('keeps given values', () => {
    expect(validate({ intervalMs: 5, floorMs: 5, mode: 'b', label: 'l' })).toMatchObject({ intervalMs: 5, mode: 'b', label: 'l' });
  });

  it.each([
    [{ intervalMs: -1 }, /TestOptions\.intervalMs: expected a finite number >= 0, received -1/],
    [{ intervalMs: Number.NaN }, /intervalMs.*received NaN/],
    [{ intervalMs: '5' }, /intervalMs.*received "5"/],
    [{ floorMs: 0 }, /floorMs: expected an integer > 0/],
    [{ floorMs: 1.5 }, /floorMs/],
    [{ name: '  ' }, /name: expected a non-empty string/],
    [{ mode: 'c' }, /mode: expected one of "a", "b", received "c"/],
    [{ strict: 1 }, /strict: expected a boolean/],
    [{ clock: 3 }, /clock: expected a function/],
    [{ tags: [1] }, /tags: expected an array of strings, received an array of length 1/],
    [{ nope: 1 }, /unknown option "nope"/],
    [{ floorMs: 2000 }, /floorMs \(2000\) must not exceed intervalMs \(1000\)/],
  ])('rejects %j', (input, message) => {
    expect(() => validate(input as Partial<Opts>)).toThrow(InvalidArgumentError);
    expect(() => validate(input as Partial<Opts>)).toThrow(message);
  });

  it('rejects a non-object', () => {
    expect(() => validate(5 as unknown as Partial<Opts>)).toThrow(/expected an options object, received 5/);
    expect(() => validate([] as unknown as Partial<Opts>)).toThrow(/received an array/);
  });
});
