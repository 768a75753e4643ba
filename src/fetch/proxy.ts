/**
 * Fetching through an HTTP(S) proxy by CONNECT tunnels, opened with undici's own
 * `Pool#connect` to the proxy (what undici's ProxyAgent does inside), but to the *checked
 * address*: the fetcher resolves the target name itself, refuses private addresses as without
 * a proxy, and asks the proxy for `CONNECT 203.0.113.7:443`. So the proxy never resolves the
 * target's name — DNS rebinding cannot slip past the check through the proxy's resolver — while
 * SNI, the certificate check and the Host header keep the hostname (TLS runs end to end over
 * the tunnel). Plain-http targets are tunnelled too, so the proxy forwards bytes and never
 * rewrites a request; a WARC therefore records what the origin server sent.
 *
 * Credentials in the proxy URL (`http://user:pass@proxy:3128`) become a Basic
 * Proxy-Authorization header on the CONNECT only.
 *
 * Never: send a request to the proxy in absolute form, or let the proxy pick the address.
 */
import type { Socket } from 'node:net';
import { type Dispatcher, Pool } from 'undici';
import { InvalidArgumentError } from '../errors/index.js';

/** A proxy the fetcher tunnels through. */
export class ProxyTunnel {
  readonly #pool: Pool;
  readonly #auth: string | undefined;
  readonly #connectTimeoutMs: number;
  /** The proxy's origin (credentials removed), for messages. */
  readonly origin: string;

  constructor(proxyUrl: string, connectTimeoutMs: number) {
    let u: URL;
    try {
      u = new URL(proxyUrl);
    } catch {
      throw new InvalidArgumentError(`HttpFetcher.proxy: not a URL: ${JSON.stringify(proxyUrl)}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidArgumentError(`HttpFetcher.proxy: expected an http: or https: proxy URL, received ${JSON.stringify(u.protocol)}`);
    this.#auth = u.username !== '' ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}` : undefined;
    this.origin = u.origin;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#pool = new Pool(u.origin, { connect: { timeout: connectTimeoutMs } });
  }

  /**
   * Opens a tunnel to `ip:port` (an address the caller has already checked), within twice the
   * connect timeout (the proxy's connection, then the proxy's own to the server; a slow proxy
   * — Tor behind Privoxy — still works): the tunnel is the connection, so a proxy that cannot
   * reach the server — it answers 502, 503 or 504 (Squid's word for a target refused or
   * unreachable is 503), or nothing in time (a target dropping packets) — fails it as a
   * connection not made (`MEGURI_PROXY_UPSTREAM`: errorKind 'connect', the host's outage),
   * not as a page's failure. A proxy overloaded itself reads
   * the same way, which is right: the proxy is the crawl's network.
   */
  async open(ip: string, port: number, signal?: AbortSignal): Promise<Socket> {
    const target = `${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
    const deadline = AbortSignal.timeout(2 * this.#connectTimeoutMs);
    let answer: Dispatcher.ConnectData;
    try {
      answer = await this.#pool.connect({
        path: target,
        headers: { host: target, ...(this.#auth !== undefined ? { 'proxy-authorization': this.#auth } : {}) },
        signal: signal === undefined ? deadline : AbortSignal.any([signal, deadline]),
      });
    } catch (err) {
      if (signal?.aborted === true) throw err;
      // The deadline's own abort (not undici's timeout connecting to the proxy, named below).
      if (deadline.aborted && (err as NodeJS.ErrnoException).code !== 'UND_ERR_CONNECT_TIMEOUT') {
        throw Object.assign(new Error(`proxy ${this.origin} opened no tunnel to ${target} in ${2 * this.#connectTimeoutMs} ms (the proxy or the server did not answer)`, { cause: err }), { code: 'MEGURI_PROXY_UPSTREAM' });
      }
      // The proxy itself failed, not the site: say so, or a proxy that went down reads as every
      // site refusing connections to its own address. The code stays (it classifies the failure).
      const e = err as NodeJS.ErrnoException;
      throw Object.assign(new Error(`proxy ${this.origin} unreachable: ${e.message}`, { cause: err }), e.code !== undefined ? { code: e.code } : {});
    }
    const { socket, statusCode } = answer;
    if (statusCode !== 200) {
      socket.destroy();
      const upstream = statusCode === 502 || statusCode === 503 || statusCode === 504;
      const why = statusCode === 503 ? ' (it could not reach the server, or is itself unavailable)' : upstream ? ' (it could not reach the server)' : '';
      throw Object.assign(new Error(`proxy ${this.origin} answered ${statusCode} to CONNECT ${target}${why}`), { code: upstream ? 'MEGURI_PROXY_UPSTREAM' : 'MEGURI_PROXY_REFUSED' });
    }
    return socket as Socket;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
