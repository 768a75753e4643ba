/**
 * One table-driven validator for every options object meguri accepts (STYLE habit 3).
 *
 * An entry point declares a table mapping each option to a field spec (type, range,
 * default). `defineOptions` turns the table into a function that rejects unknown keys and
 * bad values with an `InvalidArgumentError` naming the option and the value received, and
 * returns a frozen, fully defaulted object. Cross-field rules (floor ≤ ceiling) go in
 * `refine`, run after every field has passed. There are no hand-written `if` chains to drift
 * out of step with the types.
 */
import { InvalidArgumentError } from '../errors/index.js';

/** How one option is checked and defaulted. */
export interface FieldSpec<V> {
  /** Human description of what is accepted, used in error messages. */
  readonly expects: string;
  /** Returns the accepted value, or throws via `fail`. `value` is never undefined here. */
  check(value: unknown, fail: (why?: string) => never): V;
  /** Used when the option is absent (undefined). Absent with no default: the field stays undefined. */
  readonly fallback?: () => V;
}

/** A table of field specs, one per key of the resolved options type. */
export type OptionTable<T> = { readonly [K in keyof T]-?: FieldSpec<T[K]> };

/** Renders a received value for an error message without dumping huge objects. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value == null) {
    return String(value);
  }
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return `an object (${Object.prototype.toString.call(value).slice(8, -1)})`;
}

/**
 * Builds a validator for the options of `owner` (used in messages, e.g. `PolitenessConfig`).
 * `refine` may return an error message for an invalid combination.
 */
export function defineOptions<T extends object>(
  owner: string,
  table: OptionTable<T>,
  refine?: (resolved: T) => string | undefined,
): (input?: Partial<T> | null) => Readonly<T> {
  const keys = Object.keys(table) as (keyof T & string)[];
  const known = new Set<string>(keys);
  return (input) => {
    if (input != null && (typeof input !== 'object' || Array.isArray(input))) {
      throw new InvalidArgumentError(`${owner}: expected an options object, received ${describeValue(input)}`);
    }
    const given = (input ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(given)) {
      if (!known.has(key)) {
        throw new InvalidArgumentError(
          `${owner}: unknown option ${JSON.stringify(key)} (known: ${keys.join(', ')})`,
        );
      }
    }
    const out = {} as Record<string, unknown>;
    for (const key of keys) {
      const spec = table[key] as FieldSpec<unknown>;
      const raw = given[key];
      if (raw === undefined) {
        out[key] = spec.fallback ? spec.fallback() : undefined;
        continue;
      }
      const fail = (why?: string): never => {
        throw new InvalidArgumentError(
          `${owner}.${key}: expected ${spec.expects}, received ${describeValue(raw)}${why ? ` (${why})` : ''}`,
        );
      };
      out[key] = spec.check(raw, fail);
    }
    const resolved = out as T;
    const problem = refine?.(resolved);
    if (problem !== undefined) throw new InvalidArgumentError(`${owner}: ${problem}`);
    return Object.freeze(resolved);
  };
}

interface NumberRange {
  min?: number;
  max?: number;
  /** Exclusive lower bound, for "strictly positive" options. */
  above?: number;
  integer?: boolean;
}

function rangeText(r: NumberRange): string {
  const parts: string[] = [r.integer ? 'an integer' : 'a finite number'];
  if (r.above !== undefined) parts.push(`> ${r.above}`);
  if (r.min !== undefined) parts.push(`>= ${r.min}`);
  if (r.max !== undefined) parts.push(`<= ${r.max}`);
  return parts.join(' ');
}

/** A finite number within a range. */
export function numberField(spec: NumberRange & { default: number }): FieldSpec<number>;
export function numberField(spec: NumberRange & { default?: undefined }): FieldSpec<number | undefined>;
export function numberField(spec: NumberRange & { default?: number | undefined }): FieldSpec<number | undefined> {
  const expects = rangeText(spec);
  const field: FieldSpec<number> = {
    expects,
    check(value, fail) {
      if (typeof value !== 'number' || !Number.isFinite(value)) return fail();
      if (spec.integer && !Number.isInteger(value)) return fail();
      if (spec.above !== undefined && !(value > spec.above)) return fail();
      if (spec.min !== undefined && value < spec.min) return fail();
      if (spec.max !== undefined && value > spec.max) return fail();
      return value;
    },
  };
  const d = spec.default;
  return d === undefined ? field : { ...field, fallback: () => d };
}

/** A boolean. */
export function booleanField(defaultValue: boolean): FieldSpec<boolean> {
  return {
    expects: 'a boolean',
    check: (value, fail) => (typeof value === 'boolean' ? value : fail()),
    fallback: () => defaultValue,
  };
}

/** A string, optionally non-empty. */
export function stringField(spec: { default: string; nonEmpty?: boolean }): FieldSpec<string>;
export function stringField(spec: { default?: undefined; nonEmpty?: boolean }): FieldSpec<string | undefined>;
export function stringField(spec: { default?: string | undefined; nonEmpty?: boolean }): FieldSpec<string | undefined> {
  const field: FieldSpec<string> = {
    expects: spec.nonEmpty ? 'a non-empty string' : 'a string',
    check(value, fail) {
      if (typeof value !== 'string') return fail();
      if (spec.nonEmpty && value.trim() === '') return fail();
      return value;
    },
  };
  const d = spec.default;
  return d === undefined ? field : { ...field, fallback: () => d };
}

/** One of a fixed set of strings. */
export function enumField<S extends string>(choices: readonly S[], defaultValue: S): FieldSpec<S> {
  return {
    expects: `one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`,
    check: (value, fail) => (choices.includes(value as S) ? (value as S) : fail()),
    fallback: () => defaultValue,
  };
}

/** A function (clock, sleep, resolver, callback). */
export function functionField<F extends (...args: never[]) => unknown>(defaultValue?: F): FieldSpec<F> {
  const field: FieldSpec<F> = {
    expects: 'a function',
    check: (value, fail) => (typeof value === 'function' ? (value as F) : fail()),
  };
  return defaultValue === undefined ? field : { ...field, fallback: () => defaultValue };
}

/** Anything accepted by a custom predicate; `expects` describes it for the message. */
export function customField<V>(expects: string, accept: (value: unknown) => value is V, defaultValue?: () => V): FieldSpec<V> {
  const field: FieldSpec<V> = { expects, check: (value, fail) => (accept(value) ? value : fail()) };
  return defaultValue === undefined ? field : { ...field, fallback: defaultValue };
}
