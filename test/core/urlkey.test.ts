import { describe, expect, it } from 'vitest';
import { UseAfterFreeError, keyToHex, lanesToHex } from '../../src/index.js';
import { ORIGIN_MISS, OriginKeyTable } from '../../src/core/urlkey.js';
import { referenceXxh64 } from '../reference/xxh64.js';

const utf8 = new TextEncoder();
const SEED = 0x70617468;
const pathHex = (u: string): string => referenceXxh64(utf8.encode(u), BigInt(SEED)).toString(16).padStart(16, '0');

describe('OriginKeyTable (wasm origin memo)', () => {
  it('memoizes origins with their HostKey lanes, ids in insertion order', () => {
    using t = new OriginKeyTable();
    const ids = t.insert(['https://a.com', 'http://a.com', 'https://a.com', 'https://b.org:8443'], new Uint32Array([1, 2, 3, 4, 5, 6, 7, 8]));
    expect(Array.from(ids)).toEqual([0, 1, 0, 2]); // a held origin keeps its first entry
    expect(t.len).toBe(3);
    expect(t.memoryBytes).toBeGreaterThan(0);
    const lanes = new Uint32Array(4);
    expect(t.keyOne('https://a.com/x?y', SEED, 0, lanes)).toBe(0);
    expect(lanesToHex(lanes[0]!, lanes[1]!)).toBe('0000000200000001');
    expect(lanesToHex(lanes[2]!, lanes[3]!)).toBe(pathHex('https://a.com/x?y'));
    expect(t.keyOne('https://b.org:8443/', SEED, 0, lanes)).toBe(2);
    expect(t.keyOne('https://b.org/', SEED, 0, lanes)).toBe(-1);
    expect(Array.from(lanes.subarray(0, 2))).toEqual([0, 0]);
  });

  it('refuses what is not an ASCII http(s) origin', () => {
    using t = new OriginKeyTable();
    const bad = ['https://a.com/', 'https://', 'ftp://a.com', 'HTTPS://a.com', 'https://bücher.de', 'http://a\ud800'];
    expect(Array.from(t.insert(bad, new Uint32Array(bad.length * 2)))).toEqual(bad.map(() => ORIGIN_MISS));
    expect(t.len).toBe(0);
  });

  it('keyChunk reports misses in order and writes whole keys for hits', () => {
    using t = new OriginKeyTable();
    t.insert(['https://a.com', 'http://[::1]:8080'], new Uint32Array([10, 11, 20, 21]));
    const urls = ['x', 'https://a.com/1', 'http://[::1]:8080/', 'https://a.com', 'https://c.com/', 'https://a.com/é', 'http://[::1]:8080/z'];
    const units = urls.reduce((a, u) => a + u.length, 0);
    const out = new Uint32Array(4 * (urls.length + 1));
    const ids = new Uint32Array(urls.length - 1);
    const misses = t.keyChunk(urls, 1, urls.length, units - 1, SEED, 0, out, ids);
    expect(Array.from(misses)).toEqual([2, 3]); // chunk-relative: 'https://a.com' (no path), 'https://c.com/'
    expect(Array.from(ids)).toEqual([0, 1, ORIGIN_MISS, ORIGIN_MISS, 0, 1]);
    for (let k = 1; k < urls.length; k++) expect(keyToHex(out, k).slice(16)).toBe(pathHex(urls[k]!));
    expect(keyToHex(out, 1).slice(0, 16)).toBe('0000000b0000000a');
    expect(keyToHex(out, 6).slice(0, 16)).toBe('0000001500000014');
    expect(keyToHex(out, 4).slice(0, 16)).toBe('0'.repeat(16));
    expect(Array.from(out.subarray(0, 4))).toEqual([0, 0, 0, 0]); // before `from`: untouched
  });

  it('clears, frees once, and throws after free', () => {
    const t = new OriginKeyTable();
    t.insert(['https://a.com'], new Uint32Array(2));
    t.clear();
    expect(t.len).toBe(0);
    expect(t.keyOne('https://a.com/', SEED, 0, new Uint32Array(4))).toBe(-1);
    expect(Array.from(t.insert(['https://b.com'], new Uint32Array(2)))).toEqual([0]);
    t.free();
    t.free();
    expect(t.freed).toBe(true);
    expect(() => t.len).toThrow(UseAfterFreeError);
  });
});
