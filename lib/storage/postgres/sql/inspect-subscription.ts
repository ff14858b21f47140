// inspectSubscription on PostgreSQL: how many readable events a subscription has not finished (up to a limit), the oldest one's time, and its dead letters.
import type { SubscriptionState, SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'
import { readableEvents, unfinishedBy } from './readable-events.js'

export function inspectSubscription (tables: Tables, run: Run): SubscriptionsCapability['inspectSubscription'] {
  const { subscriptions, deadLetters } = tables
  // The lag is read as readSubscription reads: after the checkpoint, none the start snapshot saw, none finished.
  const text = `SELECT s.name IS NOT NULL AS subscribed, coalesce(lag.events, 0)::int AS "lagEvents", lag.oldest AS "oldestAt",
      (SELECT count(*) FROM ${deadLetters} WHERE name = $1::text)::int AS "deadLetters"
    FROM (SELECT 1) AS one
    LEFT JOIN ${subscriptions} AS s ON s.name = $1::text
    LEFT JOIN LATERAL (
      SELECT count(*) AS events, (array_agg(page.at ORDER BY page.epoch, page.tx, page.seq))[1] AS oldest FROM (
        ${readableEvents(tables, 'e.at', '(s.epoch, s.tx, s.seq)', '$2::int', unfinishedBy(tables))}
      ) AS page
    ) AS lag ON s.name IS NOT NULL`

  return async (name, lagLimit) => {
    const [{ subscribed, ...state }] = await run<SubscriptionState & { subscribed: boolean }>(text, [name, lagLimit]) as [SubscriptionState & { subscribed: boolean }]
    return subscribed || state.deadLetters > 0 ? state : undefined
  }
}
