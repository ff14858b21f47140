// checkpoint on PostgreSQL: a compare-and-set on the holder and the last event handled, forgetting the finished events it passes.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function checkpoint ({ events, subscriptions, finished }: Tables, run: Run): SubscriptionsCapability['checkpoint'] {
  // Past the start snapshot's xmax, or in another epoch, no event can have been visible to it, so it is dropped.
  const text = `WITH moved AS (
      UPDATE ${subscriptions} AS s SET epoch = e.epoch, tx = e.tx, seq = e.seq, last_event_id = e.id,
        start_snapshot = CASE WHEN e.epoch = s.epoch AND e.tx < pg_snapshot_xmax(s.start_snapshot) THEN s.start_snapshot END
      FROM ${events} AS e
      WHERE s.name = $1::text AND s.holder = $2::text AND s.last_event_id IS NOT DISTINCT FROM $3::uuid AND e.id = $4::uuid
      RETURNING s.name, e.epoch, e.tx, e.seq
    ), passed AS (
      DELETE FROM ${finished} AS f USING moved AS m
      WHERE f.name = m.name AND (f.epoch, f.tx, f.seq) <= (m.epoch, m.tx, m.seq)
    )
    SELECT 1 FROM moved`

  return async (name, holder, lastEventId, eventId) => (await run(text, [name, holder, lastEventId, eventId])).length === 1
}
