// lease on MySQL: creates the subscription where it starts, then takes the lease if free, lapsed or the holder's own, timed by the database clock.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'

/** Now on the database's clock, in milliseconds since the epoch: UTC whatever the session's time zone. */
export const NOW_MS = 'TIMESTAMPDIFF(MICROSECOND, \'1970-01-01 00:00:00\', UTC_TIMESTAMP(6)) DIV 1000'

export function lease ({ subscriptions, sequencer }: Tables, session: Session, sequence: () => Promise<void>): SubscriptionsCapability['lease'] {
  const exists = `SELECT 1 AS found FROM ${subscriptions} WHERE name = ?`
  // `start`: before every position; `now`: after the last position given, once every event committed
  // so far has one, so none of them is ever delivered to it.
  const create = `INSERT INTO ${subscriptions} (name, held_at, position)
    SELECT ?, ${NOW_MS}, CASE WHEN ? = 'now' THEN position ELSE 0 END FROM ${sequencer} WHERE id = 1
    ON DUPLICATE KEY UPDATE name = name`
  const take = `UPDATE ${subscriptions} SET holder = ?, lease_expires_at = ${NOW_MS} + ?, held_at = ${NOW_MS}, changes = changes + 1
    WHERE name = ? AND (holder IS NULL OR holder = ? OR lease_expires_at <= ${NOW_MS})`
  const checkpoint = `SELECT CAST(last_event_id AS CHAR) AS lastEventId FROM ${subscriptions} WHERE name = ?`

  return async ({ name, holder, ttl, from }) => {
    if ((await session.run(exists, [name])).length === 0) {
      if (from === 'now') await sequence()
      await session.write(create, [name, from])
    }
    const held = (await session.write(take, [holder, ttl, name, holder])).affectedRows === 1
    const [{ lastEventId }] = await session.run<{ lastEventId: string | null }>(checkpoint, [name]) as [{ lastEventId: string | null }]
    return { held, lastEventId }
  }
}
