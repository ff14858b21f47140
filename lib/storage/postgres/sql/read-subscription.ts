// readSubscription on PostgreSQL: the readable events after a subscription's checkpoint, none its start snapshot saw.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'
import { readableEvents } from './readable-events.js'

export function readSubscription (tables: Tables, run: Run): SubscriptionsCapability['readSubscription'] {
  const { subscriptions } = tables
  // The start snapshot speaks of its own epoch's transactions only.
  const text = `SELECT page.payload FROM ${subscriptions} AS s CROSS JOIN LATERAL (
      ${readableEvents(tables, 'e.payload::text AS payload', '(s.epoch, s.tx, s.seq)', '$2::int',
        '(s.start_snapshot IS NULL OR e.epoch <> s.epoch OR NOT pg_visible_in_snapshot(e.tx, s.start_snapshot))')}
    ) AS page
    WHERE s.name = $1::text
    ORDER BY page.epoch, page.tx, page.seq`

  return async (name, limit) => (await run<{ payload: string }>(text, [name, limit])).map(row => JSON.parse(row.payload))
}
