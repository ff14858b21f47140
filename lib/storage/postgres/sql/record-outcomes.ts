// recordOutcomes on PostgreSQL: events finished above the checkpoint, dead letters stored or updated, redelivered ones removed, in one statement while the holder holds the lease.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function recordOutcomes ({ subscriptions, events, finished, deadLetters }: Tables, run: Run): SubscriptionsCapability['recordOutcomes'] {
  // The lease row is locked first, so the lease cannot change hands halfway. A new dead letter copies
  // the event and its position from the feed; one redelivered that failed again is updated in place
  // (its event may be purged from the feed by now).
  const text = `WITH held AS (
      SELECT name, epoch, tx, seq FROM ${subscriptions} WHERE name = $1::text AND holder = $2::text FOR UPDATE
    ), marked AS (
      INSERT INTO ${finished} (name, epoch, tx, seq)
      SELECT h.name, e.epoch, e.tx, e.seq FROM held AS h JOIN ${events} AS e ON e.id = ANY($3::uuid[])
      WHERE (e.epoch, e.tx, e.seq) > (h.epoch, h.tx, h.seq)
      ON CONFLICT DO NOTHING
    ), letters AS (
      SELECT * FROM json_to_recordset($4::json) AS l (id uuid, attempts integer, error text, at text)
    ), updated AS (
      UPDATE ${deadLetters} AS d SET attempts = l.attempts, error = l.error, at = l.at, redeliver = false
      FROM held AS h, letters AS l WHERE d.name = h.name AND d.event_id = l.id
      RETURNING d.event_id
    ), stored AS (
      INSERT INTO ${deadLetters} (name, event_id, epoch, tx, seq, event, attempts, error, at)
      SELECT h.name, e.id, e.epoch, e.tx, e.seq, e.payload, l.attempts, l.error, l.at
      FROM held AS h CROSS JOIN letters AS l JOIN ${events} AS e ON e.id = l.id
      WHERE l.id NOT IN (SELECT event_id FROM updated)
      ON CONFLICT (name, event_id) DO NOTHING
    ), delivered AS (
      DELETE FROM ${deadLetters} AS d USING held AS h WHERE d.name = h.name AND d.event_id = ANY($5::uuid[])
    )
    SELECT 1 FROM held`

  return async (name, holder, { finished: ids, deadLetters: letters, delivered }) => {
    const json = JSON.stringify(letters.map(({ eventId, attempts, error, at }) => ({ id: eventId, attempts, error, at })))
    return (await run(text, [name, holder, ids, json, delivered])).length === 1
  }
}
