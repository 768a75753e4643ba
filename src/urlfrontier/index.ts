/**
 * src/urlfrontier: meguri as a URLFrontier 2.6 server (crawler-commons/url-frontier), so
 * StormCrawler, scrapy-url-frontier and any gRPC client can use a meguri frontier.
 *
 * Owns: the wire contract (proto/urlfrontier.proto, meguri's own statement of it), the
 * service, a per-crawl store with the API's rules (queues keyed by the client, leases,
 * per-queue delays, blocks and crawl limits), and its durability (checkpoint + group-committed
 * journal). Never: fetching, robots.txt or politeness of its own — a URLFrontier client does
 * those and tells the frontier through SetDelay and BlockQueueUntil.
 *
 * Cluster mode (cluster.ts, slots.ts, peer.ts): many serve nodes share one frontier through
 * src/cluster's slots, membership and fenced checkpoints; a router gives clients one address.
 *
 * Node-only (gRPC, files): exported from the Node entry, not the browser one.
 */
export { type LogLevel as UrlFrontierLogLevel, type LogSink, type UrlFrontierServer, type UrlFrontierServerOptions, startUrlFrontierServer } from './server.js';
export { type UrlFrontierClusterOptions } from './cluster.js';
export { URLFRONTIER_PROTO_PATH } from './schema.js';
export { DEFAULT_CRAWL, MAX_ITEM_BYTES, MAX_KEY_LENGTH, MAX_URL_LENGTH } from './store.js';
export { FINGERPRINT_KEY, REFETCH_BOUNDS, REFETCH_KEY } from './refetch.js';
