// batchWrites: a server stream's queued acks reach the inner call together, in order, and
// the stream's write completes only with the last one. Over a Writable shaped like grpc-js's
// server stream (`call.sendMessage`), since on an idle loopback HTTP/2 writes complete
// synchronously and the queued path is only reached under load.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { batchWrites } from '../../src/urlfrontier/service.js';

interface Inner {
  sent: number[];
  inFlight: number;
  maxInFlight: number;
  sendMessage(m: number, cb: () => void): void;
}

function serverLikeStream(): { stream: Writable & { call: Inner }; inner: Inner } {
  const inner: Inner = {
    sent: [],
    inFlight: 0,
    maxInFlight: 0,
    sendMessage(m, cb) {
      this.sent.push(m);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      // HTTP/2 writes complete asynchronously and in order under load.
      setImmediate(() => {
        this.inFlight--;
        cb();
      });
    },
  };
  const stream = new Writable({
    objectMode: true,
    highWaterMark: 16,
    write(chunk: number, _enc, cb) {
      inner.sendMessage(chunk, cb);
    },
  }) as Writable & { call: Inner };
  stream.call = inner;
  return { stream, inner };
}

async function writeAll(stream: Writable, n: number): Promise<void> {
  for (let i = 0; i < n; i++) stream.write(i);
  await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

describe('batchWrites', () => {
  it('hands every queued message to the inner call at once, in order, and finishes after the last', async () => {
    const { stream, inner } = serverLikeStream();
    batchWrites(stream);
    await writeAll(stream, 1000);
    expect(inner.sent).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(inner.inFlight).toBe(0);
    // The first write goes alone; the 999 queued behind it go together.
    expect(inner.maxInFlight).toBe(999);
  });

  it('without it the stream sends one message at a time (what it replaces)', async () => {
    const { stream, inner } = serverLikeStream();
    await writeAll(stream, 100);
    expect(inner.sent).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(inner.maxInFlight).toBe(1);
  });

  it('leaves a stream of another shape alone', () => {
    const plain = new Writable({ objectMode: true, write: (_c, _e, cb) => cb() });
    batchWrites(plain);
    expect(typeof (plain as unknown as { _writev: unknown })._writev).not.toBe('function');
  });
});
