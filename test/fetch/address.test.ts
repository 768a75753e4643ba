import { BlockList, isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AddressClass, classifyAddress, ipVersion, isPublicAddress, refusalReason } from '../../src/index.js';

const table: [string, AddressClass][] = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['100.63.255.255', 'public'],
  ['100.64.0.1', 'sharedCgnat'],
  ['100.127.255.255', 'sharedCgnat'],
  ['100.128.0.0', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.0.0.2', 'loopback'],
  ['169.254.169.254', 'linkLocal'],
  ['172.15.255.255', 'public'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.0', 'public'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', 'reserved'],
  ['192.168.1.1', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.7', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['2606:4700:4700::1111', 'public'],
  ['2001:4860:4860::8888', 'public'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::FFFF:10.1.2.3', 'private'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:0:192.168.0.1', 'private'],
  ['::127.0.0.1', 'reserved'],
  ['64:ff9b::10.0.0.1', 'private'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['64:ff9b:1::1', 'private'],
  ['2002:7f00:0001::1', 'loopback'],
  ['2002:0808:0808::1', 'public'],
  ['100::1', 'reserved'],
  ['2001::1', 'reserved'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'reserved'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['febf::1', 'linkLocal'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['4000::1', 'reserved'],
  ['1.2.3', 'invalid'],
  ['1.2.3.256', 'invalid'],
  ['01.2.3.4', 'invalid'],
  ['0x7f.0.0.1', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['example.com', 'invalid'],
  ['', 'invalid'],
  ['1::2::3', 'invalid'],
  ['12345::1', 'invalid'],
  ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ['1:2:3:4:5:6:7::8', 'invalid'],
  [':1::', 'invalid'],
  ['::ffff:1.2.3', 'invalid'],
];

describe('classifyAddress', () => {
  for (const [ip, kind] of table) {
    it(`${ip || '(empty)'} is ${kind}`, () => {
      expect(classifyAddress(ip)).toBe(kind);
      expect(isPublicAddress(ip)).toBe(kind === 'public');
    });
  }

  it('refusalReason: refuses non-public unless allowPrivate, never invalid text', () => {
    expect(refusalReason('8.8.8.8', false)).toBeUndefined();
    expect(refusalReason('10.0.0.1', false)).toBe('private address 10.0.0.1');
    expect(refusalReason('10.0.0.1', true)).toBeUndefined();
    expect(refusalReason('::ffff:127.0.0.1', false)).toBe('loopback address ::ffff:127.0.0.1');
    expect(refusalReason('nonsense', true)).toMatch(/invalid address/);
  });

  it('ipVersion agrees with node:net isIP on dotted quads and IPv6 text', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
    fc.assert(
      fc.property(fc.oneof(v4, fc.ipV6(), fc.ipV4Extended(), fc.string({ maxLength: 12 })), (text) => {
        const ours = ipVersion(text);
        const node = isIP(text);
        // We are stricter on purpose: inet_aton forms (octal, hex, short) are not addresses here.
        if (ours !== 0) expect(ours).toBe(node);
        if (node === 6) expect(ours).toBe(6);
      }),
      { seed: 17, numRuns: 2000 },
    );
  });

  it('agrees with a node:net BlockList of the non-public IPv4 ranges', () => {
    const blocked = new BlockList();
    for (const [net, prefix] of [
      ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
      ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
      ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
    ] as const) {
      blocked.addSubnet(net, prefix, 'ipv4');
    }
    fc.assert(
      fc.property(fc.nat(0xffffffff), (n) => {
        const ip = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
        expect(isPublicAddress(ip)).toBe(!blocked.check(ip, 'ipv4'));
        // The IPv4-mapped IPv6 form classifies identically.
        expect(classifyAddress(`::ffff:${ip}`)).toBe(classifyAddress(ip));
      }),
      { seed: 23, numRuns: 5000 },
    );
  });
});
