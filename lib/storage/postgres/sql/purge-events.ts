// purgeEvents on PostgreSQL: the oldest unbroken run of expired events that no live subscription still needs.
import type { FeedCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'
import { readableEvents } from './readable-events.js'

export function purgeEvents (tables: Tables, run: Run): FeedCapability['purgeEvents'] {
  const { events, subscriptions } = tables
  // The oldest readable events in feed order up to the first one kept: one not yet expired, or one a
  // subscription held since the cutoff has not handled. Only that unbroken run is deleted, so every
  // event left has every event after it, and a reader's `after` either names a kept event or none.
  const purge = `WITH oldest AS (
      SELECT oldest.id, oldest.at < $1::text AND NOT EXISTS (
          SELECT 1 FROM ${subscriptions} AS s
          WHERE s.held_at > $1::timestamptz AND (oldest.epoch, oldest.tx, oldest.seq) > (s.epoch, s.tx, s.seq)
        ) AS expired,
        row_number() OVER (ORDER BY oldest.epoch, oldest.tx, oldest.seq) AS place
      FROM (${readableEvents(tables, 'e.id, e.at', undefined, '$2::int')}) AS oldest
    )
    DELETE FROM ${events} WHERE id IN (
      SELECT id FROM oldest WHERE place < coalesce((SELECT min(place) FROM oldest WHERE NOT expired), $2::int + 1))
    RETURNING 1`
  return async (before, limit) => (await run(purge, [before, limit])).length
}
