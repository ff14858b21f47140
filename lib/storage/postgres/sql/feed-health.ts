// How long the event feed is held back on PostgreSQL: the transaction at the horizon the feed reads below, and since when it runs.
import type { FeedHealth } from '../../../feed/feed-stall.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

/**
 * Transactions younger than this many seconds are the ordinary traffic of writes, the storage's own
 * among them: each holds the feed for as long as one statement, which no one needs told.
 */
const YOUNGEST_HOLDER = 1

/**
 * The feed lists events below `pg_snapshot_xmin(pg_current_snapshot())`: the oldest transaction id
 * still running in the cluster. That is a transaction that took an id (it wrote) and has not ended,
 * in any database, or a prepared one; a session that only holds an old snapshot (REPEATABLE READ, a
 * long read) has no id and holds nothing back. So the holder is the backend whose `backend_xid` is
 * that id, running since its `xact_start`, or the prepared transaction of that id, since it was
 * prepared (it began earlier: no later start is known). A session of another role shows its id but
 * not its start unless this role may read every session's statistics (`pg_read_all_stats`): then the
 * feed has been held back for as long as the oldest event it cannot list yet has waited, and no pid
 * is told. A parallel worker shares its leader's id; the leader is the one named.
 */
export function feedHealthOf ({ events, schema }: Tables, run: Run, youngest = YOUNGEST_HOLDER): () => Promise<FeedHealth> {
  // The statement's own backend has no transaction id (it only reads), and is left out should it have one.
  const text = `SELECT json_strip_nulls(json_build_object('heldBackSeconds', held.seconds, 'pid', held.pid)) AS health
    FROM (
      SELECT greatest(extract(epoch FROM now() - holder.since), 0)::float8 AS seconds, holder.pid
      FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) AS horizon
      CROSS JOIN LATERAL (
          SELECT a.xact_start AS since, a.pid FROM pg_stat_activity AS a
          WHERE a.backend_xid = horizon.xmin::xid AND a.pid <> pg_backend_pid() AND a.leader_pid IS NULL AND a.xact_start IS NOT NULL
        UNION ALL
          SELECT p.prepared, NULL FROM pg_prepared_xacts AS p WHERE p.transaction = horizon.xmin::xid
        UNION ALL
          SELECT waiting.at::timestamptz, NULL FROM pg_stat_activity AS a
          CROSS JOIN LATERAL (
            SELECT e.at FROM ${events} AS e
            WHERE e.epoch = (SELECT epoch FROM ${schema}) AND e.tx >= horizon.xmin
            ORDER BY e.epoch, e.tx, e.seq LIMIT 1
          ) AS waiting
          WHERE a.backend_xid = horizon.xmin::xid AND a.pid <> pg_backend_pid() AND a.xact_start IS NULL
      ) AS holder
      LIMIT 1
    ) AS held
    WHERE held.seconds >= $1`

  return async () => (await run<{ health: FeedHealth }>(text, [youngest]))[0]?.health ?? { heldBackSeconds: 0 }
}
