// readSubscription on PostgreSQL: the readable events after a subscription's checkpoint (or an event it read), none its start snapshot saw, none it finished.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'
import { readableEvents, unfinishedBy } from './readable-events.js'

export function readSubscription (tables: Tables, run: Run): SubscriptionsCapability['readSubscription'] {
  const { subscriptions, events } = tables
  // Without an event read earlier (or with one that is gone), the page starts after the checkpoint.
  const text = `SELECT page.payload FROM ${subscriptions} AS s
    LEFT JOIN ${events} AS a ON a.id = $3::uuid
    CROSS JOIN LATERAL (
      ${readableEvents(tables, 'e.payload::text AS payload',
        '(coalesce(a.epoch, s.epoch), coalesce(a.tx, s.tx), coalesce(a.seq, s.seq))', '$2::int', unfinishedBy(tables))}
    ) AS page
    WHERE s.name = $1::text
    ORDER BY page.epoch, page.tx, page.seq`

  return async (name, limit, after) => (await run<{ payload: string }>(text, [name, limit, after ?? null])).map(row => JSON.parse(row.payload))
}
