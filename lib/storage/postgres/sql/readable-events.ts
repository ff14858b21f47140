// The readable part of the feed: events in (epoch, transaction, sequence) order below the oldest running transaction.
import type { Tables } from '../tables.js'

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

/**
 * The condition that subscription `s` has yet to finish event `e`: its start snapshot (which speaks of
 * its own epoch's transactions only) did not see it, and it is not recorded as finished.
 */
export function unfinishedBy ({ finished }: Tables): string {
  return `(s.start_snapshot IS NULL OR e.epoch <> s.epoch OR NOT pg_visible_in_snapshot(e.tx, s.start_snapshot))
    AND NOT EXISTS (SELECT 1 FROM ${finished} AS f WHERE f.name = s.name AND (f.epoch, f.tx, f.seq) = (e.epoch, e.tx, e.seq))`
}
