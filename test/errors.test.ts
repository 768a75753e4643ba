import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as clusterErrors from '../src/cluster/errors.js';
import * as errors from '../src/errors/index.js';

// The README's error table is the user-facing contract; it must list exactly the classes
// exported here and by the cluster (src/cluster/errors.ts), each with the code an instance
// actually carries.
const classes = { ...errors, ...clusterErrors } as unknown as Record<string, new (...args: unknown[]) => errors.MeguriError>;
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const rows = [...readme.matchAll(/^\| `(MEGURI_ERR_[A-Z_]+)` \| `(\w+)` \|/gm)].map((m) => ({ code: m[1]!, cls: m[2]! }));

function instantiate(name: string): errors.MeguriError {
  const Ctor = classes[name]!;
  switch (name) {
    case 'CorruptPartitionError':
      return new Ctor('header', 'bad magic');
    case 'CorruptBucketError':
    case 'CorruptSettingsError':
    case 'DiskFullError':
      return new Ctor('/data/b0001.run', 'bad checksum');
    case 'WouldBlockError':
      return new Ctor('example.com', 1);
    case 'CrawlSettingsMismatchError':
      return new Ctor('news', 'slots', 64, 32);
    case 'StaleEpochError':
      return new Ctor(3, 7);
    case 'CheckpointStoreError':
      return new Ctor('write', '/store/news/slot-00003', Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    default:
      return new Ctor('message');
  }
}

describe('error classes', () => {
  const exported = Object.entries(classes).filter(([n, v]) => typeof v === 'function' && n !== 'MeguriError').map(([n]) => n);

  it('the README table lists every exported error class exactly once', () => {
    expect(rows.map((r) => r.cls).sort()).toEqual([...exported].sort());
  });

  it.each(rows)('$cls carries $code and is a MeguriError', ({ code, cls }) => {
    const e = instantiate(cls);
    expect(e).toBeInstanceOf(errors.MeguriError);
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe(code);
    expect(e.name).toBe(cls);
  });

  it('codes are unique', () => {
    expect(new Set(rows.map((r) => r.code)).size).toBe(rows.length);
  });
});
