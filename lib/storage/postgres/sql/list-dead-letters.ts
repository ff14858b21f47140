// listDeadLetters on PostgreSQL: a page of a subscription's dead letters in feed order, after a dead letter or an event of the feed.
import type { StoredDeadLetter, SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

interface Row {
  found: boolean
  event: string | null
  attempts: number
  error: string
  at: string
}

export function listDeadLetters ({ events, deadLetters }: Tables, run: Run): SubscriptionsCapability['listDeadLetters'] {
  // `after` is placed by its dead letter, which keeps the position once the feed purged the event, or
  // else by the feed, once it left the list. One row even when the page is empty, to tell an unknown
  // `after` apart.
  const text = `WITH after AS (
      SELECT coalesce(d.epoch, e.epoch) AS epoch, coalesce(d.tx, e.tx) AS tx, coalesce(d.seq, e.seq) AS seq
      FROM (SELECT 1) AS one
      LEFT JOIN ${deadLetters} AS d ON d.name = $1::text AND d.event_id = $2::uuid
      LEFT JOIN ${events} AS e ON e.id = $2::uuid
    )
    SELECT $2::uuid IS NULL OR after.epoch IS NOT NULL AS found, page.event::text AS event, page.attempts, page.error, page.at
    FROM after LEFT JOIN LATERAL (
      SELECT d.* FROM ${deadLetters} AS d
      WHERE d.name = $1::text AND (d.epoch, d.tx, d.seq) > (coalesce(after.epoch, -1), coalesce(after.tx, '0'::xid8), coalesce(after.seq, -1))
      ORDER BY d.epoch, d.tx, d.seq LIMIT $3::int
    ) AS page ON true
    ORDER BY page.epoch, page.tx, page.seq`

  return async (name, { after, limit }): Promise<StoredDeadLetter[] | undefined> => {
    const rows = await run<Row>(text, [name, after ?? null, limit])
    if (!rows[0]!.found) return undefined
    return rows.filter(row => row.event !== null).map(({ event, attempts, error, at }) => ({ event: JSON.parse(event!), attempts, error, at }))
  }
}
