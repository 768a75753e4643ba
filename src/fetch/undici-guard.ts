/**
 * A guard for undici 7's HTTP/1 parser: it owns one patch of undici's internal `Parser#finish`,
 * made once per process, and never changes what undici does in any other state.
 *
 * Why: when a response body applies backpressure (its reader is slower than the socket — the
 * fetcher decodes, records and parses as it reads), undici pauses its llhttp parser; if the
 * server then closes the connection, undici's socket 'end' handler calls `finish()`, which
 * asserts the parser is not paused and throws from an event handler: an uncaught
 * AssertionError that ended the whole crawl (a `Connection: close` response of 64 KiB read
 * late, every time; nodejs/undici#5360). undici 8 completes a paused parser there
 * (nodejs/undici#5474), but undici 8 needs a newer Node than the 20 this package supports, and
 * 7.30.3 still asserts. So, as that fix does: a paused parser is resumed and the socket's
 * buffered bytes are run through it (backpressure is advisory at that point: the body keeps
 * what is delivered), then finished — an EOF-delimited body completes, a short one fails as a
 * truncated response, as undici reports it otherwise.
 *
 * What it relies on (undici 7.x, lib/dispatcher/client-h1.js): the socket carries its parser
 * under the symbol described 'parser' from connect on, before 'undici:client:connected' is
 * published; the parser has `paused`, `ptr`, `socket.read()`, `llhttp.llhttp_resume(ptr)`,
 * `execute(chunk)` and `finish()`. Without `finish` and `execute` on its prototype the patch is
 * not made; a parser lacking the others at the close finishes as undici would (the crash stays
 * possible then). test/fetch/undici-guard.test.ts fails when the patch is not made
 * (`pausedParserGuarded`) or no longer prevents the crash.
 */
import diagnostics from 'node:diagnostics_channel';

/** The parts of undici's internal HTTP/1 parser the guard uses. */
interface H1Parser {
  paused: boolean;
  ptr: number | null;
  socket: { read(): Buffer | null; destroyed: boolean };
  llhttp: { llhttp_resume(ptr: number): void };
  execute(chunk: Buffer): void;
  finish(): Error | null;
}

const EMPTY = Buffer.alloc(0);
let patched = false;
let installed = false;

/** Whether undici's parser has been patched (the first HTTP/1 connection after the guard was installed patches it). */
export function pausedParserGuarded(): boolean {
  return patched;
}

/**
 * Installs the guard: the next HTTP/1 connection undici makes in this process patches its
 * parser class. Idempotent. (`HttpFetcher` installs it; a library user driving undici for
 * meguri's fetcher needs nothing more.)
 */
export function guardPausedParserEnd(): void {
  if (installed) return;
  installed = true;
  const onConnected = (message: unknown): void => {
    if (patched) return;
    const socket = (message as { socket?: object } | undefined)?.socket;
    if (socket === undefined) return;
    const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'parser');
    const parser = key === undefined ? undefined : (socket as Record<symbol, unknown>)[key];
    if (parser === null || typeof parser !== 'object') return; // an HTTP/2 socket has none
    patchFinish(Object.getPrototypeOf(parser) as H1Parser);
    diagnostics.unsubscribe('undici:client:connected', onConnected);
  };
  diagnostics.subscribe('undici:client:connected', onConnected);
}

function patchFinish(proto: H1Parser): void {
  const finish = proto.finish;
  if (typeof finish !== 'function' || typeof proto.execute !== 'function') return;
  proto.finish = function finishEvenIfPaused(this: H1Parser): Error | null {
    // A parser without what the guard uses (another undici) finishes as undici would.
    if (this.paused && this.ptr !== null && this.ptr !== undefined && typeof this.llhttp?.llhttp_resume === 'function' && typeof this.socket?.read === 'function') {
      // Run what the socket still holds through the parser, resuming across pauses.
      for (;;) {
        if (this.ptr === null || this.socket.destroyed) return null;
        if (this.paused) {
          this.llhttp.llhttp_resume(this.ptr);
          this.paused = false;
        }
        // An empty execute flushes the parser, as undici's own resume does: a body paused on its
        // last byte reaches its message's end there (llhttp_finish alone would call a complete
        // Content-Length body truncated).
        const chunk = this.socket.read();
        this.execute(chunk ?? EMPTY);
        if (chunk === null) break;
      }
      if (this.ptr === null) return null; // the message completed and the parser went with it
      if (this.paused) {
        // Paused by the last bytes: llhttp_finish delivers an EOF-delimited body's end.
        this.llhttp.llhttp_resume(this.ptr);
        this.paused = false;
      }
    }
    return finish.call(this);
  };
  patched = true;
}
