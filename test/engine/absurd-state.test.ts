/**
 * Checksum-valid but absurd state (issue 23, finding 6): every decoded field of a checkpoint
 * (host records, scheduler counters, the engine's state) and of a journal record is checked
 * for type and range on load, and a value no writer produces is refused with a typed error
 * naming the field — never a crash, a hang or a quietly wrong resume.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CHECKPOINT_FILE, DataDir, parseEngineState } from '../../src/engine/datadir.js';
import { decodeRecord, encodeRecord } from '../../src/engine/records.js';
import { CorruptJournalError, CorruptPartitionError, Frontier, type HostImage, type PartitionImage, decodePartition, encodePartition, writePartition } from '../../src/index.js';
import { Journal } from '../../src/journal/index.js';
import { politenessConfig } from '../../src/politeness/index.js';
import { STACK_LINE, bufferIo } from '../cli/helpers.js';

const SEED = 0x2306;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-absurd-'));
  dirs.push(d);
  return d;
}

/** A small crawled frontier's image (three hosts, some fetched). */
function baseImage(): PartitionImage {
  const f = new Frontier(0, 480_000, { stateMachine: true });
  for (let h = 0; h < 3; h++) for (let i = 0; i < 3; i++) f.seed(`https://h${h}.example/p/${i}`, `h${h}.example`, 0, 480_000, 480_000, 0);
  f.drain(480_000 * 3_600_000, (r) => ({ row: r.row, url: r.url, status: 200 }), 4);
  return decodePartition(f.checkpointBytes());
}

const validState = {
  v: 1,
  generation: 3,
  completed: 4,
  ok: 4,
  grouping: 'host',
  politeness: { ...politenessConfig() },
  groups: [['h0.example', ['https://h0.example']]],
  inFlight: ['https://h1.example/p/2'],
  robotsOutages: [['h2.example', 1_700_000_000_000, 503, 2]],
  robotsMaxAttempts: 5,
  robots: [{ origin: 'http://h0.example', state: 'parsed', text: 'User-agent: *\nDisallow: /x\n', fetchedAtMs: 1_700_000_000_000, refreshAtMs: 1_700_086_400_000, lastStatus: 200, redirects: 0 }],
};

/** `image` carrying engine state `state`, through the bytes (JSON turns ±Infinity into null, as a file would). */
function withState(image: PartitionImage, state: unknown): PartitionImage {
  return decodePartition(encodePartition({ ...image, meta: { ...image.meta, settings: { ...image.meta.settings, engine: state } } }));
}

/** Values no writer produces, by what the field holds. */
const absurdCount = fc.constantFrom(0.5, -1, -1000, Infinity, -Infinity, 1e300, 2 ** 60);
const absurdTime = fc.constantFrom(Infinity, -Infinity, 1e300, -1e300, 8.64e15 + 1);
const absurdDuration = fc.constantFrom(Infinity, -1, -1000, 1e300);
const notANumber = fc.constantFrom<unknown>('3', null, true, [], {});

const HOST_FIELDS: [keyof HostImage, fc.Arbitrary<number>][] = [
  ['flags', fc.constantFrom(0.5, -1, 2 ** 32, Infinity)],
  ['sched', fc.constantFrom(0.5, -1, Infinity)],
  ['crawlDelayMs', absurdDuration],
  ['intervalMs', absurdDuration],
  ['nextEligibleMs', absurdTime],
  ['lastDispatchMs', absurdTime],
  ['latencyMs', absurdDuration],
  ['urlBudget', absurdCount],
  ['depthCap', absurdCount],
  ['admitted', absurdCount],
  ['hostScore', fc.constantFrom(Infinity, -Infinity)],
  ['activatedAtMs', absurdTime],
  ['waitingSinceMs', absurdTime],
  ['ipSpendMs', absurdTime],
  ['ipSpendIntervalMs', absurdDuration],
  ['servedSinceActivation', absurdCount],
  ['ceilingStreak', absurdCount],
];

describe('absurd but checksum-valid checkpoints', () => {
  const image = baseImage();

  it('the base image and state load (the property below is about the fields, not the base)', () => {
    expect(parseEngineState(withState(image, validState).meta.settings['engine'])).toMatchObject({ generation: 3 });
    const params = [['http://a.test:8080/post/', ['ref'], ['page']]];
    const aliases = [['http://a.test', 'https://www.a.test'], ['http://b.test:8080', null]];
    const slashes = [['http://a.test/docs/', 'add', []], ['http://a.test/', null, ['strip', 'add']]];
    const cases = [['http://iis.test', true], ['https://a.test:8443', false]];
    const paramNumbers = [['http://a.test:8080/post/', 'ref', null], ['http://a.test:8080/post/', 'pagina', ['1']]];
    expect(parseEngineState(withState(image, { ...validState, params, paramNumbers, aliases, slashes, cases }).meta.settings['engine'])).toMatchObject({ params, paramNumbers, aliases, slashes, cases });
    // Fetch starts kept across checkpoints; a state without them (an older build's) loads too.
    const fetchStarts = [['http://a.test/p/6', 1_700_000_000_000], ['http://a.test/p/6', 1_700_000_060_000]];
    expect(parseEngineState(withState(image, { ...validState, fetchStarts }).meta.settings['engine'])).toMatchObject({ fetchStarts });
    expect(parseEngineState(withState(image, validState).meta.settings['engine']).fetchStarts).toBeUndefined();
  });

  it('any host field out of range is refused naming the field (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: image.hosts.length - 1 }),
        fc.integer({ min: 0, max: HOST_FIELDS.length - 1 }).chain((i) => fc.tuple(fc.constant(HOST_FIELDS[i]![0]), HOST_FIELDS[i]![1])),
        (hostIdx, [field, value]) => {
          const hosts = image.hosts.map((h, i) => (i === hostIdx ? { ...h, [field]: value } : h));
          const bytes = encodePartition({ ...image, hosts });
          let err: unknown;
          try {
            decodePartition(bytes);
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(CorruptPartitionError);
          expect((err as Error).message).toContain(`field ${field} `);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('any engine-state field out of range or of the wrong type is refused naming the field (property)', () => {
    const cases = fc.oneof(
      fc.tuple(fc.constantFrom('generation', 'completed', 'ok', 'robotsMaxAttempts'), fc.oneof(absurdCount, notANumber)),
      fc.tuple(fc.constant('groups'), fc.constantFrom<unknown>({}, [['a']], [['a', 'b']], [[1, []]], [['a', [2]]], 'x', null)),
      fc.tuple(fc.constant('inFlight'), fc.constantFrom<unknown>([1], {}, 'x', null)),
      fc.tuple(fc.constant('grouping'), fc.constantFrom<unknown>('hosts', 1, null)),
      fc.tuple(fc.constant('politeness'), fc.constantFrom<unknown>({ ...politenessConfig(), floorMs: -5 }, { ...politenessConfig(), ceilingMs: Infinity }, { bogus: 1 }, 'x')),
      fc.tuple(fc.constant('robotsOutages'), fc.constantFrom<unknown>([['h', Infinity, 503, 1]], [['h', 1e300, 503, 1]], [['h', 0, 503.5, 1]], [['h', 0, 503, -1]], [[1, 0, 0, 0]], 'x')),
      fc.tuple(fc.constant('v'), fc.constantFrom<unknown>(2, 0.5, null)),
      fc.tuple(fc.constant('fetchStarts'), fc.constantFrom<unknown>('x', {}, [['http://a.test/']], [['http://a.test/', 1e300]], [['http://a.test/', '1']], [[5, 0]], [['http://a.test/', 0, 0]])),
      fc.tuple(fc.constant('aliases'), fc.constantFrom<unknown>('x', {}, [['http://a.test']], [['http://a.test', 'https://b.test']], [['https://a.test', 'http://a.test']], [['http://a.test/', null]], [[5, null]])),
      fc.tuple(fc.constant('slashes'), fc.constantFrom<unknown>('x', {}, [['http://a.test/', 'add']], [['http://a.test/a/b/', 'add', []]], [['http://a.test/', 'up', []]], [['http://a.test/', null, ['add', 'strip', 'add']]], [['http://a.test/', null, 'add']])),
      fc.tuple(fc.constant('cases'), fc.constantFrom<unknown>('x', {}, [['http://a.test']], [['http://a.test', 'yes']], [['http://a.test/', true]], [['a.test', false]], [[5, true]])),
      fc.tuple(fc.constant('paramNumbers'), fc.constantFrom<unknown>('x', {}, [['http://a.test/', 'k']], [['http://a.test/', '', null]], [['http://a.test/', 'k', ['one']]], [['http://a.test/', 'k', 1]], [['nope', 'k', null]])),
      fc.tuple(fc.constant('params'), fc.constantFrom<unknown>('x', {}, [['http://a.test/', ['ref']]], [['not an origin', [], []]], [['http://a.test', [], []]], [['http://a.test/path', [], []]], [['http://a.test/', [''], []]], [['http://a.test/', [], [7]]], [['http://a.test/', 'ref', []]])),
      fc.tuple(
        fc.constant('robots'),
        fc.constantFrom<unknown>(
          'x',
          [{ origin: 'http://a.test', state: 'parsed', text: '', fetchedAtMs: 1e300, refreshAtMs: 0, lastStatus: 200, redirects: 0 }],
          [{ origin: 'http://a.test', state: 'parsed', text: '', fetchedAtMs: 0, refreshAtMs: Infinity, lastStatus: 200, redirects: 0 }],
          [{ origin: 'http://a.test', state: 'unreachable', fetchedAtMs: 0, refreshAtMs: 0, lastStatus: 503, redirects: 0 }],
          [{ origin: 'not an origin', state: 'parsed', fetchedAtMs: 0, refreshAtMs: 0, lastStatus: 200, redirects: 0 }],
          [{ origin: 'http://a.test', state: 'parsed', text: 5, fetchedAtMs: 0, refreshAtMs: 0, lastStatus: 200, redirects: -1 }],
        ),
      ),
    );
    fc.assert(
      fc.property(cases, ([field, value]) => {
        const loaded = withState(image, { ...validState, [field]: value });
        let err: unknown;
        try {
          parseEngineState(loaded.meta.settings['engine']);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(CorruptPartitionError);
        expect((err as Error).message).toContain(`engine.${field}`);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('scheduler counters out of range are refused by Frontier.recover, naming the field', () => {
    for (const [field, value] of [['clockMs', 1e300], ['wheelHour', 0.5], ['dispatches', -1000], ['parkedScores', [['h', null]]]] as const) {
      const scheduler = new TextEncoder().encode(JSON.stringify({ clockMs: 0, wheelHour: 0, dispatches: 0, parkedScores: [], [field]: value }));
      expect(() => Frontier.recover(encodePartition({ ...image, scheduler }), { stateMachine: true })).toThrow(new RegExp(`${field}`));
      expect(() => Frontier.recover(encodePartition({ ...image, scheduler }), { stateMachine: true })).toThrow(CorruptPartitionError);
    }
  });

  it('a data directory with absurd state: resume and the read commands answer with the typed error, no stack', async () => {
    const dir = tmp();
    const hosts = image.hosts.map((h, i) => (i === 0 ? { ...h, intervalMs: Infinity, nextEligibleMs: 1e300 } : h));
    writePartition(join(dir, CHECKPOINT_FILE), { ...image, hosts, meta: { ...image.meta, settings: { ...image.meta.settings, engine: { ...validState, completed: -1000 } } } });
    expect(() => new DataDir(dir).readCheckpoint()).toThrow(CorruptPartitionError);
    for (const argv of [['hosts', dir, '--why'], ['stats', dir], ['inspect', join(dir, CHECKPOINT_FILE)], ['schedule', dir]]) {
      const io = bufferIo();
      const code = await main(argv, io);
      expect(code, argv.join(' ')).toBe(1);
      expect(io.err()).toMatch(/intervalMs|nextEligibleMs/);
      expect(io.err()).not.toMatch(STACK_LINE);
    }
    // The engine state alone (hosts sane): `completed: -1000` would overshoot --max-pages by 1,000.
    writePartition(join(dir, CHECKPOINT_FILE), { ...image, meta: { ...image.meta, settings: { ...image.meta.settings, engine: { ...validState, completed: -1000 } } } });
    expect(() => new DataDir(dir).readCheckpoint()).toThrow(/engine\.completed is -1000/);
    const io = bufferIo();
    expect(await main(['stats', dir], io)).toBe(1);
    expect(io.err()).toMatch(/engine\.completed/);
  });
});

describe('absurd but checksum-valid journal records', () => {
  const dispatch = { t: 'd', h: 'h0.example', at: 1_700_000_000_000, k: '0'.repeat(32), u: 'https://h0.example/' };
  const outcome = { t: 'o', k: '0'.repeat(32), u: 'https://h0.example/', h: 'h0.example', at: 1_700_000_000_000, now: 1_700_000_000_100, s: 200, lm: 1_600_000_000, lat: 40 };

  it('in-range records decode', () => {
    expect(decodeRecord(new TextEncoder().encode(JSON.stringify(dispatch)), 0).t).toBe('d');
    expect(decodeRecord(new TextEncoder().encode(JSON.stringify(outcome)), 0).t).toBe('o');
  });

  it('any numeric field out of range is refused with CorruptJournalError naming it (property)', () => {
    const cases = fc.oneof(
      fc.tuple(fc.constant(dispatch), fc.constant('at'), fc.oneof(absurdTime, notANumber)),
      fc.tuple(fc.constant(dispatch), fc.constant('r'), fc.constantFrom<unknown>(2, 0, 'yes')),
      fc.tuple(fc.constant(outcome), fc.constantFrom('at', 'now', 'lm'), fc.oneof(absurdTime, notANumber)),
      fc.tuple(fc.constant(outcome), fc.constant('s'), fc.constantFrom<unknown>(-1, 200.5, 1000, 1e300, '200', null)),
      fc.tuple(fc.constant(outcome), fc.constant('lat'), fc.oneof(absurdDuration, notANumber)),
    );
    fc.assert(
      fc.property(cases, ([base, field, value]) => {
        const bytes = new TextEncoder().encode(JSON.stringify({ ...base, [field]: value }));
        let err: unknown;
        try {
          decodeRecord(bytes, 7);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(CorruptJournalError);
        expect((err as Error).message).toMatch(new RegExp(`record 7 .*field ${field} `));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('a resume reading a journal with `at: 1e300` stops with the typed error', () => {
    const dir = tmp();
    const j = Journal.create(join(dir, 'journal.mgj'), 3);
    j.append(encodeRecord(dispatch as never));
    j.append(encodeRecord({ ...outcome, at: 1e300 } as never));
    j.close();
    expect(() => new DataDir(dir).readJournal(3)).toThrow(CorruptJournalError);
  });
});
