// Subscriptions on PostgreSQL: a lease timed by the database clock, and a checkpoint only the holder moves.
import type { Lease, SubscriptionStore } from '../types.js'
import type { Run } from './client.js'
import { readableEvents } from './feed.js'
import type { Tables } from './tables.js'

export function subscriptionStore (tables: Tables, run: Run): SubscriptionStore {
  const { events, subscriptions, schema } = tables
  // Creates the subscription where `from` says (`start`: before every position; `now`: past every
  // event the current snapshot sees as committed, remembered so that none of them is delivered even
  // if it sorts later), then takes the lease if it is free, lapsed or the holder's own. The
  // database's clock times every lease.
  const lease = `WITH snapshot AS (SELECT pg_current_snapshot() AS snapshot), taken AS (
      INSERT INTO ${subscriptions} AS s (name, holder, lease_expires_at, held_at, epoch, tx, seq, start_snapshot)
      SELECT $1::text, $2::text, clock_timestamp() + $3::int * interval '1 millisecond', clock_timestamp(),
        CASE WHEN $4::text = 'now' THEN (SELECT epoch FROM ${schema}) ELSE 0 END,
        CASE WHEN $4::text = 'now' THEN pg_snapshot_xmin(snapshot) ELSE '0'::xid8 END, -1,
        CASE WHEN $4::text = 'now' THEN snapshot END
      FROM snapshot
      ON CONFLICT (name) DO UPDATE
        SET holder = EXCLUDED.holder, lease_expires_at = EXCLUDED.lease_expires_at, held_at = EXCLUDED.held_at
        WHERE s.holder IS NULL OR s.holder = EXCLUDED.holder OR s.lease_expires_at <= clock_timestamp()
      RETURNING last_event_id
    )
    SELECT EXISTS (SELECT 1 FROM taken) AS held,
      coalesce((SELECT last_event_id FROM taken), (SELECT last_event_id FROM ${subscriptions} WHERE name = $1::text))::text AS "lastEventId"`

  // The start snapshot speaks of its own epoch's transactions only.
  const readSubscription = `SELECT page.payload FROM ${subscriptions} AS s CROSS JOIN LATERAL (
      ${readableEvents(tables, 'e.payload::text AS payload', '(s.epoch, s.tx, s.seq)', '$2::int',
        '(s.start_snapshot IS NULL OR e.epoch <> s.epoch OR NOT pg_visible_in_snapshot(e.tx, s.start_snapshot))')}
    ) AS page
    WHERE s.name = $1::text
    ORDER BY page.epoch, page.tx, page.seq`

  // Past the start snapshot's xmax, or in another epoch, no event can have been visible to it, so it is dropped.
  const checkpoint = `UPDATE ${subscriptions} AS s SET epoch = e.epoch, tx = e.tx, seq = e.seq, last_event_id = e.id,
      start_snapshot = CASE WHEN e.epoch = s.epoch AND e.tx < pg_snapshot_xmax(s.start_snapshot) THEN s.start_snapshot END
    FROM ${events} AS e
    WHERE s.name = $1::text AND s.holder = $2::text AND s.last_event_id IS NOT DISTINCT FROM $3::uuid AND e.id = $4::uuid
    RETURNING 1`

  const release = `UPDATE ${subscriptions} SET holder = NULL, lease_expires_at = NULL WHERE name = $1::text AND holder = $2::text`

  return {
    // One row: when another instance created the subscription while this statement ran, not held and
    // no checkpoint yet; the next call sees it.
    lease: async ({ name, holder, ttl, from }) => (await run<Lease>(lease, [name, holder, ttl, from]))[0]!,
    readSubscription: async (name, limit) =>
      (await run<{ payload: string }>(readSubscription, [name, limit])).map(row => JSON.parse(row.payload)),
    checkpoint: async (name, holder, lastEventId, eventId) =>
      (await run(checkpoint, [name, holder, lastEventId, eventId])).length === 1,
    release: async (name, holder) => {
      await run(release, [name, holder])
    }
  }
}
