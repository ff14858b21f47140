// The event feed on PostgreSQL: read in (epoch, transaction, sequence) order below the oldest running transaction; purge the oldest run.
import type { OrderEvent } from '../../events.js'
import type { EventFeedStore } from '../types.js'
import type { Run } from './client.js'
import type { Tables } from './tables.js'

/**
 * The readable events after `after` (a row of epoch, tx and seq, or none), in feed order, at most
 * `limit`, with `columns` of `e` and its position. An event is readable once no transaction that could
 * still commit before it is running: every event of an earlier epoch (a restored one), and in the
 * current epoch those below the oldest transaction still running anywhere in the database, which have
 * committed or never will. So nothing can later take a place before one listed. The sequence alone
 * commits out of order, hence the transaction id before it. Each branch is one bounded range of the
 * (epoch, tx, seq) index: the current epoch's ends at the horizon rather than filtering past it.
 */
export function readableEvents ({ events, schema }: Tables, columns: string, after: string | undefined, limit: string, condition = 'true'): string {
  const start = after === undefined ? '' : `AND (e.epoch, e.tx, e.seq) > ${after}`
  const branch = (range: string) => `(SELECT ${columns}, e.epoch, e.tx, e.seq FROM ${events} AS e
      WHERE ${range} ${start} AND ${condition} ORDER BY e.epoch, e.tx, e.seq LIMIT ${limit})`
  return `SELECT * FROM (
      ${branch(`e.epoch < (SELECT epoch FROM ${schema})`)}
      UNION ALL
      ${branch(`e.epoch = (SELECT epoch FROM ${schema}) AND e.tx < pg_snapshot_xmin(pg_current_snapshot())`)}
    ) AS readable ORDER BY epoch, tx, seq LIMIT ${limit}`
}

export function eventFeedStore (tables: Tables, run: Run): EventFeedStore {
  const { events, subscriptions } = tables
  const firstEvents = `SELECT page.payload FROM (${readableEvents(tables, 'e.payload::text AS payload', undefined, '$1::int')}) AS page`
  // One row even when the page is empty, so "after is unknown" and "nothing new" are told apart.
  const eventsAfter = `SELECT after.id IS NOT NULL AS found, page.payload FROM (SELECT 1) AS one
    LEFT JOIN ${events} AS after ON after.id = $1::uuid
    LEFT JOIN LATERAL (${readableEvents(tables, 'e.payload::text AS payload', '(after.epoch, after.tx, after.seq)', '$2::int')}) AS page ON true
    ORDER BY page.epoch, page.tx, page.seq`

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

  return {
    async listEvents ({ after, limit }): Promise<OrderEvent[] | undefined> {
      if (after === undefined) {
        return (await run<{ payload: string }>(firstEvents, [limit])).map(row => JSON.parse(row.payload))
      }
      const rows = await run<{ found: boolean, payload: string | null }>(eventsAfter, [after, limit])
      if (!rows[0]!.found) return undefined
      return rows[0]!.payload === null ? [] : rows.map(row => JSON.parse(row.payload!))
    },
    purgeEvents: async (before, limit) => (await run(purge, [before, limit])).length
  }
}
