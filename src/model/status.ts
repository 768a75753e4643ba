/** URL statuses: the u8 `status` column of the URL table (DESIGN §4). */

/** Where a URL is in its life (DESIGN §4). Stored as a u8 in the URL table. */
export const UrlStatus = {
  /** Waiting in the front bank or a back queue for its first (or a retried) fetch. */
  Scheduled: 0,
  /** Dispatched; its outcome has not been reported yet. */
  InFlight: 1,
  /** Fetched (200/304); waits for its next due time if recrawl is on. */
  Crawled: 2,
  /** Its recrawl time has come; schedulable again. */
  DueRecrawl: 3,
  /** A transient failure (429, 5xx, transport, no final HTTP status: ≥ 600 or a final 1xx); re-queued after a backoff. */
  RetryWait: 4,
  /** 404/410, or retries exhausted: not fetched again. */
  Gone: 5,
  /** Parked by the trap defense (budget, depth, pattern); kept to dedup rediscoveries. */
  Trapped: 6,
  /** robots.txt forbids it. */
  Disallowed: 7,
  /** Answered with a redirect; `redirectTo` names the target's row. */
  Redirected: 8,
  /**
   * Refused by a crawl setting, not by the server: out of scope, an address the policy
   * refuses (private without `allowPrivate`), a name that does not exist. Never fetched while
   * the setting holds; `Frontier#reconsider` queues it again when the settings change.
   */
  Refused: 9,
} as const;
export type UrlStatus = (typeof UrlStatus)[keyof typeof UrlStatus];

/**
 * Whether a row of this status is one whose page the crawl fetched or will fetch: scheduled, in
 * flight, crawled, due again, waiting to retry, or redirected (its target has a row); not gone,
 * parked by the trap defence, disallowed or refused (`Frontier.liveCount`).
 */
export function isLiveStatus(status: number): boolean {
  return status <= UrlStatus.RetryWait || status === UrlStatus.Redirected;
}

/** Names of the statuses, indexed by value (for stats and the CLI). */
export const URL_STATUS_NAMES: readonly string[] = [
  'Scheduled',
  'InFlight',
  'Crawled',
  'DueRecrawl',
  'RetryWait',
  'Gone',
  'Trapped',
  'Disallowed',
  'Redirected',
  'Refused',
];
