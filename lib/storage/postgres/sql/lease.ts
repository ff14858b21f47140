// lease on PostgreSQL: creates the subscription where it starts, then takes the lease if free, lapsed or the holder's own, timed by the database clock.
import type { Lease, SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function lease ({ subscriptions, schema }: Tables, run: Run): SubscriptionsCapability['lease'] {
  // Creates the subscription where `from` says (`start`: before every position; `now`: past every
  // event the current snapshot sees as committed, remembered so that none of them is delivered even
  // if it sorts later), then takes the lease if it is free, lapsed or the holder's own. The
  // database's clock times every lease.
  const text = `WITH snapshot AS (SELECT pg_current_snapshot() AS snapshot), taken AS (
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

  // One row: when another instance created the subscription while this statement ran, not held and
  // no checkpoint yet; the next call sees it.
  return async ({ name, holder, ttl, from }) => (await run<Lease>(text, [name, holder, ttl, from]))[0]!
}
