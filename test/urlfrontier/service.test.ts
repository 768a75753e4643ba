// Every behaviour of the URLFrontier API, through a real gRPC client on loopback, with an
// injected clock (no sleeps, no timed assertions).
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Harness,
  type Msg,
  call,
  discovered,
  getUrls,
  known,
  putDiscovered,
  putUrls,
  start,
  stream,
} from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const statusOf = (acks: { status: string }[]): string[] => acks.map((a) => a.status);

describe('PutURLs', () => {
  it('acks every item once, in order, with its ID or else its URL', async () => {
    h = await start({ defaultDelayMs: 0 });
    const acks = await putUrls(h.client, [
      discovered('https://a.example/1', {}, 'first'),
      discovered('https://a.example/2'),
      known('https://a.example/3', 0, {}, 'third'),
    ]);
    expect(acks).toEqual([
      { ID: 'first', status: 'OK' },
      { ID: 'https://a.example/2', status: 'OK' },
      { ID: 'third', status: 'OK' },
    ]);
  });

  it('skips URLs without a host, malformed URLs, keys over 255 characters and empty items', async () => {
    h = await start({ defaultDelayMs: 0 });
    const acks = await putUrls(h.client, [
      discovered('mailto:someone@example.com'),
      discovered('not a url'),
      discovered(''),
      discovered('https://a.example/ok', { key: 'k'.repeat(256) }),
      discovered('https://a.example/ok255', { key: 'k'.repeat(255) }),
      { ID: 'nothing' },
    ]);
    expect(statusOf(acks)).toEqual(['SKIPPED', 'SKIPPED', 'SKIPPED', 'SKIPPED', 'OK', 'SKIPPED']);
    expect(acks[5]!.ID).toBe('nothing');
    const count = await call<{ value: number }>(h.client, 'CountURLs', { key: '', crawlID: '' });
    expect(count.value).toBe(1);
  });

  it('stores a discovered URL only when unknown, in any state', async () => {
    h = await start({ defaultDelayMs: 0 });
    expect(statusOf(await putUrls(h.client, [discovered('https://a.example/x', { metadata: { d: { values: ['1'] } } })]))).toEqual(['OK']);
    expect(statusOf(await putUrls(h.client, [discovered('https://a.example/x', { metadata: { d: { values: ['2'] } } })]))).toEqual(['SKIPPED']);
    await putUrls(h.client, [known('https://a.example/x', 0)]);
    expect(statusOf(await putUrls(h.client, [discovered('https://a.example/x')]))).toEqual(['SKIPPED']);
    const st = await call<{ known: { info: { metadata: Record<string, { values: string[] }> } } }>(h.client, 'GetURLStatus', { url: 'https://a.example/x', key: '', crawlID: '' });
    expect(st.known.info.metadata).toEqual({});
    // a duplicate inside one stream is skipped too
    expect(statusOf(await putUrls(h.client, [discovered('https://a.example/y'), discovered('https://a.example/y')]))).toEqual(['OK', 'SKIPPED']);
  });

  it('known items always apply: 0 = done forever, a date = not before it; unknown ones are created', async () => {
    h = await start({ defaultDelayMs: 0 });
    const c = h.clock;
    await putUrls(h.client, [discovered('https://a.example/1'), discovered('https://a.example/2')]);
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/1', 'https://a.example/2']);
    await putUrls(h.client, [known('https://a.example/1', 0), known('https://a.example/2', c.sec + 60), known('https://b.example/new', c.sec + 10)]);
    c.advance(30_000); // leases (30 s) would have ended anyway; the known updates ended them already
    expect(await getUrls(h.client, {})).toEqual(['https://b.example/new']);
    c.advance(30_000); // a/2 is due; b/new's lease ran out without an update, so it comes again
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/2', 'https://b.example/new']);
    c.advance(3_600_000);
    await putUrls(h.client, [known('https://a.example/2', 0), known('https://b.example/new', 0)]);
    expect(await getUrls(h.client, {})).toEqual([]);
    const stats = await call<{ size: number; counts: Record<string, number> }>(h.client, 'GetStats', { key: '', crawlID: '' });
    expect(stats.size).toBe(0);
    expect(stats.counts['completed']).toBe(3);
  });

  it('a known update ends the lease: a refetch date in the past is served again at once', async () => {
    h = await start({ defaultDelayMs: 0 });
    await putUrls(h.client, [discovered('https://a.example/1')]);
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/1']);
    expect(await getUrls(h.client, {})).toEqual([]); // leased
    await putUrls(h.client, [known('https://a.example/1', h.clock.sec - 5)]);
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/1']);
  });

  it('concurrent streams: every item acked once, every OK stored once', async () => {
    h = await start({ defaultDelayMs: 0 });
    const streams = 6;
    const per = 2000;
    const results = await Promise.all(
      Array.from({ length: streams }, (_, s) =>
        // overlapping URL ranges: each URL is discovered by two streams, exactly one may win
        putUrls(h!.client, Array.from({ length: per }, (_, i) => discovered(`https://h${i % 37}.example/p${(s >> 1) * per + i}`))),
      ),
    );
    const oks = results.flat().filter((a) => a.status === 'OK').length;
    expect(results.map((r) => r.length)).toEqual(new Array(streams).fill(per));
    expect(oks).toBe((streams / 2) * per);
    const count = await call<{ value: number }>(h.client, 'CountURLs', { key: '', crawlID: '' });
    expect(count.value).toBe(oks);
  });
});

describe('PutDiscovered', () => {
  it('answers one BatchAck per batch, ID echoed, one status per item in order; an empty batch gets an empty ack', async () => {
    h = await start({ defaultDelayMs: 0 });
    const acks = await putDiscovered(h.client, [
      { ID: 'probe', items: [] },
      { ID: 'b1', items: [{ url: 'https://a.example/1' }, { url: 'https://a.example/1' }, { url: 'nope' }, { url: 'https://a.example/2' }] },
      { ID: 'b2', items: [{ url: 'https://a.example/2' }] },
    ]);
    expect(acks).toEqual([
      { ID: 'probe', statuses: [] },
      { ID: 'b1', statuses: ['OK', 'SKIPPED', 'SKIPPED', 'OK'] },
      { ID: 'b2', statuses: ['SKIPPED'] },
    ]);
  });

  it('refuses an oversized batch with RESOURCE_EXHAUSTED naming the limit, after acking the batches before it; nothing of it or after it is applied', async () => {
    h = await start({ defaultDelayMs: 0, maxBatchItems: 1000 });
    const items = Array.from({ length: 1001 }, (_, i) => ({ url: `https://a.example/${i}` }));
    const acks: { ID: string; statuses: string[] }[] = [];
    const err = await new Promise<grpc.ServiceError | undefined>((resolve) => {
      const s = h!.client['PutDiscovered']!() as grpc.ClientDuplexStream<Msg, { ID: string; statuses: string[] }>;
      s.on('data', (a) => acks.push(a));
      s.on('error', (e: grpc.ServiceError) => resolve(e));
      s.on('end', () => resolve(undefined));
      for (const b of [{ ID: 'before', items: items.slice(0, 3) }, { ID: 'big', items }, { ID: 'after', items: [{ url: 'https://b.example/1' }] }]) s.write(b);
      s.end();
    });
    // FAIL (what it answered before) tells a client to resend the same batch, for ever.
    expect(err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(err?.details).toContain('"big" has 1001 items');
    expect(err?.details).toContain('limit of 1000 per batch (maxBatchItems)');
    expect(acks).toEqual([{ ID: 'before', statuses: ['OK', 'OK', 'OK'] }]);
    expect((await call<{ value: number }>(h.client, 'CountURLs', {})).value).toBe(3);
    // The limit is per batch: the same URLs in batches within it go in, on a new stream.
    const again = await putDiscovered(h.client, [{ ID: 'x', items: items.slice(0, 1000) }, { ID: 'y', items: items.slice(1000) }]);
    expect(again.map((a) => a.statuses.filter((st) => st === 'OK').length)).toEqual([997, 1]);
  });
});

describe('crawls', () => {
  it('"" is DEFAULT and reported as DEFAULT; crawls are isolated in every call', async () => {
    h = await start({ defaultDelayMs: 0 });
    await putUrls(h.client, [discovered('https://a.example/1'), discovered('https://a.example/1', { crawlID: 'other' }), discovered('https://a.example/2', { crawlID: 'DEFAULT' })]);
    const crawls = await call<{ values: string[] }>(h.client, 'ListCrawls', {});
    expect(crawls.values.sort()).toEqual(['DEFAULT', 'other']);
    const got = await stream<{ url: string; crawlID: string }>(h.client, 'GetURLs', { crawlID: '' });
    expect(got.map((g) => [g.url, g.crawlID])).toEqual([
      ['https://a.example/1', 'DEFAULT'],
      ['https://a.example/2', 'DEFAULT'],
    ]);
    const stats = await call<{ crawlID: string; size: number }>(h.client, 'GetStats', { key: '', crawlID: '' });
    expect(stats).toMatchObject({ crawlID: 'DEFAULT', size: 2 });
    expect((await call<{ size: number }>(h.client, 'GetStats', { key: '', crawlID: 'other' })).size).toBe(1);
    expect(await getUrls(h.client, { crawlID: 'other' })).toEqual(['https://a.example/1']);
    // anyCrawlID serves every crawl
    await putUrls(h.client, [discovered('https://c.example/1', { crawlID: 'third' })]);
    const any = await stream<{ url: string; crawlID: string }>(h.client, 'GetURLs', { anyCrawlID: {} });
    expect(any.map((g) => g.crawlID)).toEqual(['third']);
    // Neither set (StormCrawler's spout and scrapy-url-frontier without a crawl configured) is any
    // crawl too, as the reference serves it; before, it served DEFAULT alone.
    await putUrls(h.client, [discovered('https://d.example/1', { crawlID: 'fourth' }), discovered('https://d.example/2')]);
    const unset = await stream<{ url: string; crawlID: string }>(h.client, 'GetURLs', {});
    expect(unset.map((g) => g.crawlID).sort()).toEqual(['DEFAULT', 'fourth']);
    expect((await call<{ value: number }>(h.client, 'DeleteCrawl', { value: 'other' })).value).toBe(1);
    expect((await call<{ values: string[] }>(h.client, 'ListCrawls', {})).values.sort()).toEqual(['DEFAULT', 'fourth', 'third']);
    expect((await call<{ value: number }>(h.client, 'DeleteCrawl', { value: '' })).value).toBe(3);
    // deleting forgets: the URLs can be discovered again
    expect(statusOf(await putUrls(h.client, [discovered('https://a.example/1')]))).toEqual(['OK']);
  });
});

describe('GetURLs', () => {
  it('queue key defaults to the host name; due URLs earliest first', async () => {
    h = await start({ defaultDelayMs: 0 });
    const s = h.clock.sec;
    await putUrls(h.client, [known('https://a.example/late', s - 10), known('https://a.example/early', s - 100), discovered('https://a.example/now'), known('https://a.example/future', s + 100)]);
    const got = await stream<{ url: string; key: string }>(h.client, 'GetURLs', {});
    expect(got.map((g) => g.url)).toEqual(['https://a.example/early', 'https://a.example/late', 'https://a.example/now']);
    expect(new Set(got.map((g) => g.key))).toEqual(new Set(['a.example']));
  });

  it('max_urls_per_queue counts leased URLs; max_queues caps queues and rotates across calls', async () => {
    h = await start({ defaultDelayMs: 0 });
    const items = [];
    for (const host of ['q1', 'q2', 'q3']) for (let i = 0; i < 4; i++) items.push(discovered(`https://${host}.example/${i}`));
    await putUrls(h.client, items);
    const first = await stream<{ key: string }>(h.client, 'GetURLs', { max_urls_per_queue: 2, max_queues: 2 });
    expect(first.map((g) => g.key)).toEqual(['q1.example', 'q1.example', 'q2.example', 'q2.example']);
    const second = await stream<{ key: string }>(h.client, 'GetURLs', { max_urls_per_queue: 2, max_queues: 2 });
    // q3 is next in rotation; q1 and q2 already hold 2 leased URLs each
    expect(second.map((g) => g.key)).toEqual(['q3.example', 'q3.example']);
    const third = await stream<{ key: string }>(h.client, 'GetURLs', { max_urls_per_queue: 3, max_queues: 0 });
    expect(third.map((g) => g.key).sort()).toEqual(['q1.example', 'q2.example', 'q3.example']);
    // restricting to one key
    expect(await getUrls(h.client, { key: 'q1.example' })).toEqual(['https://q1.example/3']);
  });

  it('without a crawlID, rotates over the queues of every crawl: a large crawl does not starve the others', async () => {
    h = await start({ defaultDelayMs: 0 });
    const items = [];
    for (let i = 0; i < 50; i++) for (let j = 0; j < 3; j++) items.push(discovered(`https://a${i}.example/${j}`, { crawlID: 'A' }));
    for (let i = 0; i < 5; i++) items.push(discovered(`https://b${i}.example/`, { crawlID: 'B' }));
    await putUrls(h.client, items);
    // 1 s leases and 2 s between calls: every queue of A always has a URL to give. Walking the
    // crawls in creation order with one max_queues, A took every call (B got nothing in 20).
    const served = new Map<string, number>();
    for (let call = 0; call < 11; call++) {
      for (const g of await stream<{ key: string; crawlID: string }>(h.client, 'GetURLs', { max_queues: 5, max_urls_per_queue: 1, delay_requestable: 1 })) {
        served.set(`${g.crawlID} ${g.key}`, (served.get(`${g.crawlID} ${g.key}`) ?? 0) + 1);
      }
      h.clock.advance(2000);
    }
    expect(served.size).toBe(55); // 11 calls × 5 queues: each of the 55 once
    expect([...served.values()].every((n) => n === 1)).toBe(true);
    expect([...served.keys()].filter((k) => k.startsWith('B ')).length).toBe(5);
    // With a key, over the crawls holding that queue: max_queues 1 takes each crawl in turn.
    await putUrls(h.client, ['A', 'B', 'C'].map((c) => discovered(`https://shared.example/${c}`, { crawlID: c })));
    const turns: string[] = [];
    for (let call = 0; call < 3; call++) {
      turns.push(...(await stream<{ crawlID: string }>(h.client, 'GetURLs', { key: 'shared.example', max_queues: 1, delay_requestable: 1, anyCrawlID: {} })).map((g) => g.crawlID));
      h.clock.advance(2000);
    }
    expect(turns.sort()).toEqual(['A', 'B', 'C']);
  });

  it('leases for delay_requestable seconds (0 = 30 s) and serves again when a lease ends without an update', async () => {
    h = await start({ defaultDelayMs: 0 });
    await putUrls(h.client, [discovered('https://a.example/1'), discovered('https://b.example/1')]);
    expect(await getUrls(h.client, { key: 'a.example', delay_requestable: 5 })).toEqual(['https://a.example/1']);
    expect(await getUrls(h.client, { key: 'b.example' })).toEqual(['https://b.example/1']);
    expect((await call<{ inProcess: number }>(h.client, 'GetStats', {})).inProcess).toBe(2);
    h.clock.advance(4_999);
    expect(await getUrls(h.client, {})).toEqual([]);
    h.clock.advance(1);
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/1']);
    h.clock.advance(25_000);
    expect(await getUrls(h.client, {})).toEqual(['https://b.example/1']);
  });

  it('SetDelay: a queue waits its delay after producing URLs (per queue or the crawl default); two callers never share a window', async () => {
    h = await start(); // default delay 1 s
    const items = [];
    for (let i = 0; i < 6; i++) items.push(discovered(`https://a.example/${i}`), discovered(`https://b.example/${i}`));
    await putUrls(h.client, items);
    const [x, y] = await Promise.all([
      getUrls(h.client, { max_urls_per_queue: 1, delay_requestable: 600 }),
      getUrls(h.client, { max_urls_per_queue: 1, delay_requestable: 600 }),
    ]);
    expect([...x, ...y].sort()).toEqual(['https://a.example/0', 'https://b.example/0']);
    expect(x.length === 2 || y.length === 2).toBe(true);
    h.clock.advance(999);
    expect(await getUrls(h.client, { max_urls_per_queue: 2, delay_requestable: 600 })).toEqual([]);
    h.clock.advance(1);
    expect((await getUrls(h.client, { max_urls_per_queue: 2, delay_requestable: 600 })).length).toBe(2);
    await call(h.client, 'SetDelay', { key: 'a.example', delay_requestable: 10 });
    await call(h.client, 'SetDelay', { key: '', delay_requestable: 0 });
    h.clock.advance(1000);
    // b has 2 URLs leased: room for one more under 3, then one more under 4, with no delay now
    expect(await getUrls(h.client, { max_urls_per_queue: 3, delay_requestable: 600 })).toEqual(['https://b.example/2']);
    expect(await getUrls(h.client, { max_urls_per_queue: 4, delay_requestable: 600 })).toEqual(['https://b.example/3']);
    h.clock.advance(9_000);
    expect(await getUrls(h.client, { key: 'a.example', delay_requestable: 600 })).toEqual(['https://a.example/2', 'https://a.example/3', 'https://a.example/4', 'https://a.example/5']);
  });

  it('a delay starts only when the queue actually produced URLs', async () => {
    h = await start();
    await call(h.client, 'SetDelay', { key: 'a.example', delay_requestable: 60 });
    expect(await getUrls(h.client, {})).toEqual([]); // empty queue: produced nothing, no window starts
    await putUrls(h.client, [discovered('https://a.example/1')]);
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/1']);
  });

  it('BlockQueueUntil blocks to the millisecond and 0 unblocks; SetActive(false) stops GetURLs but not PutURLs', async () => {
    h = await start({ defaultDelayMs: 0 });
    await putUrls(h.client, [discovered('https://a.example/1'), discovered('https://b.example/1')]);
    await call(h.client, 'BlockQueueUntil', { key: 'a.example', time: h.clock.sec + 3 });
    expect(await getUrls(h.client, {})).toEqual(['https://b.example/1']);
    h.clock.advance(2_999);
    expect(await getUrls(h.client, {})).toEqual([]);
    h.clock.advance(1);
    await call(h.client, 'BlockQueueUntil', { key: 'a.example', time: h.clock.sec + 100 });
    await call(h.client, 'BlockQueueUntil', { key: 'a.example', time: 0 });
    await call(h.client, 'SetActive', { state: false });
    expect((await call<{ state: boolean }>(h.client, 'GetActive', {})).state).toBe(false);
    expect(await getUrls(h.client, {})).toEqual([]);
    expect(statusOf(await putUrls(h.client, [discovered('https://c.example/1')]))).toEqual(['OK']);
    await call(h.client, 'SetActive', { state: true });
    expect((await getUrls(h.client, {})).sort()).toEqual(['https://a.example/1', 'https://c.example/1']);
    await expect(call(h.client, 'BlockQueueUntil', { key: '', time: 1 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    // No URL to look up is a bad request (before: NOT_FOUND, as for a URL not stored yet).
    await expect(call(h.client, 'GetURLStatus', { url: '', key: '', crawlID: '' })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(call(h.client, 'GetURLStatus', { url: 'https://nowhere.example/', key: '', crawlID: '' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('SetCrawlLimit counts completed URLs; an unknown queue is NOT_FOUND; a queue known only by a control call keeps it', async () => {
    h = await start({ defaultDelayMs: 0 });
    await expect(call(h.client, 'SetCrawlLimit', { key: 'a.example', limit: 2 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await call(h.client, 'SetDelay', { key: 'a.example', delay_requestable: 0 }); // the queue now exists, with no URL
    await call(h.client, 'SetCrawlLimit', { key: 'a.example', limit: 2 });
    await putUrls(h.client, [1, 2, 3, 4].map((i) => discovered(`https://a.example/${i}`)));
    const first = await getUrls(h.client, {});
    expect(first).toEqual(['https://a.example/1', 'https://a.example/2']); // never more than the limit can still take
    await putUrls(h.client, [known(first[0]!, 0), known(first[1]!, 0)]);
    expect(await getUrls(h.client, {})).toEqual([]);
    await call(h.client, 'SetCrawlLimit', { key: 'a.example', limit: 0 });
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/3', 'https://a.example/4']);
  });

  it('a block or delay set before the queue has URLs is kept, and counts as no queue or crawl until then', async () => {
    h = await start({ defaultDelayMs: 0 });
    await call(h.client, 'BlockQueueUntil', { key: 'a.example', time: h.clock.sec + 10 });
    // A mistyped crawl ID (or key) in a control call used to list a crawl and count a queue of nothing.
    await call(h.client, 'SetDelay', { key: '', delay_requestable: 5, crawlID: 'typo' });
    await call(h.client, 'BlockQueueUntil', { key: 'x.example', time: h.clock.sec + 10, crawlID: 'typo' });
    expect((await call<{ values: string[] }>(h.client, 'ListCrawls', {})).values).toEqual([]);
    expect(await call(h.client, 'GetStats', { key: '', crawlID: 'typo' })).toMatchObject({ numberOfQueues: 0, size: 0 });
    expect((await call<{ values: string[] }>(h.client, 'ListQueues', { include_inactive: true })).values).toEqual([]);
    await putUrls(h.client, [discovered('https://a.example/1')]);
    expect((await call<{ values: string[] }>(h.client, 'ListCrawls', {})).values).toEqual(['DEFAULT']);
    expect(await getUrls(h.client, {})).toEqual([]);
    h.clock.advance(10_000);
    expect(await getUrls(h.client, {})).toEqual(['https://a.example/1']);
  });
});

describe('inspection and maintenance', () => {
  async function seed(hh: Harness): Promise<void> {
    const items = [];
    for (const host of ['a', 'b', 'c', 'd']) for (let i = 0; i < 3; i++) items.push(discovered(`https://${host}.example/Page${i}`));
    await putUrls(hh.client, items);
  }

  it('GetStats: size, inProcess, completed, active_queues, numberOfQueues, per queue or crawl', async () => {
    h = await start({ defaultDelayMs: 0 });
    await seed(h);
    await getUrls(h.client, { key: 'a.example' });
    await putUrls(h.client, [known('https://b.example/Page0', 0), known('https://b.example/Page1', 0), known('https://b.example/Page2', 0)]);
    await call(h.client, 'BlockQueueUntil', { key: 'c.example', time: h.clock.sec + 100 });
    const st = await call<Record<string, unknown>>(h.client, 'GetStats', { key: '', crawlID: '' });
    expect(st).toMatchObject({ size: 9, inProcess: 3, numberOfQueues: 4, crawlID: 'DEFAULT' });
    // The blocked queue still holds its URLs: active, as the schema's comment and the reference count it.
    expect(st['counts']).toEqual({ completed: 3, active_queues: 3 });
    const q = await call<Record<string, unknown>>(h.client, 'GetStats', { key: 'a.example', crawlID: '' });
    expect(q).toMatchObject({ size: 3, inProcess: 3, numberOfQueues: 1 });
  });

  it('ListQueues pages and leaves inactive queues out unless asked', async () => {
    h = await start({ defaultDelayMs: 0 });
    await seed(h);
    await putUrls(h.client, [0, 1, 2].map((i) => known(`https://d.example/Page${i}`, 0)));
    const active = await call<{ values: string[]; total: number; start: number; size: number; crawlID: string }>(h.client, 'ListQueues', {});
    expect(active).toEqual({ values: ['a.example', 'b.example', 'c.example'], total: 3, start: 0, size: 3, crawlID: 'DEFAULT' });
    const page = await call<{ values: string[]; total: number }>(h.client, 'ListQueues', { start: 1, size: 2, include_inactive: true });
    expect(page).toMatchObject({ values: ['b.example', 'c.example'], total: 4 });
  });

  it('ListURLs pages and filters (case-sensitive or not); CountURLs agrees; GetURLStatus is NOT_FOUND for an unknown URL', async () => {
    h = await start({ defaultDelayMs: 0 });
    await seed(h);
    const all = await stream<{ known: { info: { url: string } }; creation_date: number }>(h.client, 'ListURLs', {});
    expect(all.length).toBe(12);
    expect(all[0]!.creation_date).toBe(h.clock.sec);
    const page = await stream<{ known: { info: { url: string } } }>(h.client, 'ListURLs', { start: 2, size: 3, key: 'b.example' });
    expect(page.map((p) => p.known.info.url)).toEqual(['https://b.example/Page2']);
    const sensitive = await stream(h.client, 'ListURLs', { filter: 'page1' });
    expect(sensitive.length).toBe(0);
    const insensitive = await stream(h.client, 'ListURLs', { filter: 'page1', ignoreCase: true });
    expect(insensitive.length).toBe(4);
    expect((await call<{ value: number }>(h.client, 'CountURLs', { filter: 'page1', ignoreCase: true })).value).toBe(4);
    expect((await call<{ value: number }>(h.client, 'CountURLs', { key: 'c.example' })).value).toBe(3);
    const st = await call<{ known: { refetchable_from_date: number; info: { key: string } } }>(h.client, 'GetURLStatus', { url: 'https://c.example/Page0' });
    expect(st.known).toMatchObject({ refetchable_from_date: h.clock.sec, info: { key: 'c.example' } });
    await expect(call(h.client, 'GetURLStatus', { url: 'https://zzz.example/' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(call(h.client, 'GetURLStatus', { url: 'https://c.example/Page0', key: 'other' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('DeleteQueue returns how many URLs went and forgets them; PurgeURLs drops URLs older than N days', async () => {
    h = await start({ defaultDelayMs: 0 });
    await seed(h);
    expect((await call<{ value: number }>(h.client, 'DeleteQueue', { key: 'a.example' })).value).toBe(3);
    expect((await call<{ value: number }>(h.client, 'DeleteQueue', { key: 'a.example' })).value).toBe(0);
    expect(statusOf(await putUrls(h.client, [discovered('https://a.example/Page0')]))).toEqual(['OK']);
    h.clock.advance(3 * 86_400_000);
    await putUrls(h.client, [discovered('https://e.example/fresh')]);
    expect((await call<{ value: number }>(h.client, 'PurgeURLs', { key: 'b.example', days: 2 })).value).toBe(3);
    expect((await call<{ value: number }>(h.client, 'PurgeURLs', { key: '', days: 2 })).value).toBe(7);
    expect((await call<{ value: number }>(h.client, 'CountURLs', {})).value).toBe(1);
  });

  it('ListNodes names this node; SetLogLevel changes what is logged', async () => {
    const lines: string[] = [];
    h = await start({ defaultDelayMs: 0, maxBatchItems: 1, log: (level, logger, message) => lines.push(`${level} ${logger} ${message}`) });
    expect((await call<{ values: string[] }>(h.client, 'ListNodes', {})).values).toEqual([`127.0.0.1:${h.server.port}`]);
    const refused = { code: grpc.status.RESOURCE_EXHAUSTED };
    await expect(putDiscovered(h.client, [{ ID: 'x', items: [{ url: 'https://a.example/1' }, { url: 'https://a.example/2' }] }])).rejects.toMatchObject(refused);
    expect(lines.filter((l) => l.startsWith('WARN')).length).toBe(1);
    await call(h.client, 'SetLogLevel', { package: 'meguri.urlfrontier', level: 'ERROR' });
    await expect(putDiscovered(h.client, [{ ID: 'y', items: [{ url: 'https://a.example/1' }, { url: 'https://a.example/2' }] }])).rejects.toMatchObject(refused);
    expect(lines.filter((l) => l.startsWith('WARN')).length).toBe(1);
  });
});
