/**
 * src/warc: the WARC/1.1 vocabulary meguri writes — record serialization (one gzip member per
 * record), labelled base32 digests, the HTTP head/payload rules that decide what a
 * WARC-Payload-Digest covers, and the memory of earlier captures that turns a recrawl of an
 * unchanged page into a revisit record.
 *
 * Never: touch the network or decide what is fetched; never store a body it was not given.
 * The file rotation and the crawl wiring live in src/cli/warc.ts (`WarcWriter`), which is the
 * only writer; tests read the files back with their own strict reader and with warcio.
 */
export { CaptureIndex, type OriginalCapture } from './captures.js';
export { type WarcDigestAlgorithm, base32, warcDigest } from './digest.js';
export { type Dechunked, type HttpHead, type Payload, dechunk, headerValue, parseHead, payloadOf, statusOf } from './http.js';
export { PROFILE_IDENTICAL, PROFILE_NOT_MODIFIED, type WarcType, gzipRecord, recordBytes, recordId, warcDate, warcFields } from './record.js';
