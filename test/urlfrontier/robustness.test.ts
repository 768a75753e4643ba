// Bad input and bad clients: a clear status, nothing acked lost, the server stays up.
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, type Msg, call, discovered, putDiscovered, putUrls, removeDir, start, tempDir } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('robustness', () => {
  it('a client that cancels mid-stream: what was acked stays, the server keeps serving', async () => {
    h = await start({ defaultDelayMs: 0 });
    const acked: string[] = [];
    await new Promise<void>((resolve) => {
      const s = h!.client['PutURLs']!() as grpc.ClientDuplexStream<Msg, { ID: string; status: string }>;
      s.on('data', (a) => {
        acked.push(a.ID);
        if (acked.length === 500) s.cancel();
      });
      s.on('error', (err: grpc.ServiceError) => {
        expect(err.code).toBe(grpc.status.CANCELLED);
        resolve();
      });
      for (let i = 0; i < 5000; i++) s.write(discovered(`https://a.example/${i}`));
    });
    const count = (await call<{ value: number }>(h.client, 'CountURLs', {})).value;
    expect(count).toBeGreaterThanOrEqual(acked.length);
    expect(statusOfAll(await putUrls(h.client, [discovered('https://b.example/after')]))).toEqual(['OK']);
  });

  it('a stream that breaks off without ending: the server stays up and later calls work', async () => {
    h = await start({ defaultDelayMs: 0 });
    const other = (await import('./helpers.js')).connect(h.server.port);
    const s = other['PutURLs']!() as grpc.ClientDuplexStream<Msg, unknown>;
    s.on('error', () => {});
    for (let i = 0; i < 100; i++) s.write(discovered(`https://c.example/${i}`));
    await new Promise((r) => setTimeout(r, 50));
    other.close(); // the channel goes away under the open stream
    expect((await call<{ state: boolean }>(h.client, 'GetActive', {})).state).toBe(true);
    expect(statusOfAll(await putUrls(h.client, [discovered('https://d.example/1')]))).toEqual(['OK']);
  });

  it('a message over the size limit is RESOURCE_EXHAUSTED; the next call works', async () => {
    h = await start({ defaultDelayMs: 0, maxMessageBytes: 64 * 1024 });
    const items = Array.from({ length: 2000 }, (_, i) => ({ url: `https://a.example/a-fairly-long-path/${i}` }));
    await expect(putDiscovered(h.client, [{ ID: 'huge', items }])).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    const acks = await putDiscovered(h.client, [{ ID: 'small', items: items.slice(0, 10) }]);
    expect(acks[0]!.statuses).toEqual(new Array(10).fill('OK'));
  });

  it('a control call naming a key or crawl ID over 255 characters is INVALID_ARGUMENT, never journaled (durability stays)', async () => {
    const data = tempDir();
    try {
      // A 64 KiB journal record limit: a 100 KB key journaled would be refused, ending durability.
      h = await start({ dataDir: data, defaultDelayMs: 0, maxJournalRecordBytes: 65_536 });
      const long = 'k'.repeat(100_000);
      const invalid = { code: grpc.status.INVALID_ARGUMENT };
      await expect(call(h.client, 'SetDelay', { key: long, delay_requestable: 1 })).rejects.toMatchObject(invalid);
      await expect(call(h.client, 'SetDelay', { key: '', crawlID: long, delay_requestable: 1 })).rejects.toMatchObject(invalid);
      await expect(call(h.client, 'BlockQueueUntil', { key: long, time: 1 })).rejects.toMatchObject(invalid);
      await expect(call(h.client, 'DeleteQueue', { key: long })).rejects.toMatchObject(invalid);
      await expect(call(h.client, 'DeleteCrawl', { value: long })).rejects.toMatchObject(invalid);
      await expect(call(h.client, 'PurgeURLs', { key: long, days: 0 })).rejects.toMatchObject(invalid);
      await expect(call(h.client, 'SetDelay', { key: 'k'.repeat(256), delay_requestable: 1 })).rejects.toMatchObject({ details: expect.stringContaining('256 characters, over 255') });
      await call(h.client, 'SetDelay', { key: 'k'.repeat(255), delay_requestable: 1 }); // the longest key an item can have
      expect(statusOfAll(await putUrls(h.client, [discovered('https://a.example/1')]))).toEqual(['OK']);
      await h.close();
      h = undefined;
    } finally {
      removeDir(data);
    }
  });

  it('odd values are answered, not thrown: long URLs, unicode, control characters, metadata', async () => {
    h = await start({ defaultDelayMs: 0 });
    const acks = await putUrls(h.client, [
      discovered(`https://a.example/${'x'.repeat(100_000)}`),
      discovered('https://ünïcödé.example/päth?q=ü'),
      discovered('https://a.example/\u0000\u0001'),
      discovered('http://'),
      discovered('https://a.example/m', { metadata: { k: { values: ['v1', 'v2'] }, e: { values: [] } } }),
    ]);
    expect(acks.length).toBe(5);
    expect(acks[0]!.status).toBe('SKIPPED'); // over MAX_URL_LENGTH
    expect(acks[3]!.status).toBe('SKIPPED');
    expect(acks[4]!.status).toBe('OK');
    expect((await call<{ state: boolean }>(h.client, 'GetActive', {})).state).toBe(true);
  });
});

function statusOfAll(acks: { status: string }[]): string[] {
  return acks.map((a) => a.status);
}
