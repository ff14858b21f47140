// purgeEvents on MySQL: the oldest unbroken run of expired events that no live subscription still needs.
import type { FeedCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'

export function purgeEvents ({ events, subscriptions }: Tables, session: Session): FeedCapability['purgeEvents'] {
  const oldest = `SELECT position, CAST(at AS CHAR) AS at FROM ${events} WHERE position IS NOT NULL ORDER BY position LIMIT ?`
  // The lowest checkpoint of a subscription held since the cutoff: it still needs every event above it.
  const needed = `SELECT MIN(position) AS position FROM ${subscriptions} WHERE held_at > ?`
  const purge = `DELETE FROM ${events} WHERE position IS NOT NULL AND position <= ?`

  // The oldest listed events in feed order up to the first one kept: one not yet expired, or one a
  // live subscription has not handled. Only that unbroken run is deleted, so every event left has
  // every event after it, and a reader's `after` either names a kept event or none.
  return async (before, limit) => {
    const rows = await session.run<{ position: string, at: string }>(oldest, [limit])
    const [{ position: kept }] = await session.run<{ position: string | null }>(needed, [Date.parse(before)]) as [{ position: string | null }]
    const end = rows.findIndex(row => row.at >= before || (kept !== null && Number(row.position) > Number(kept)))
    const run = end === -1 ? rows : rows.slice(0, end)
    if (run.length === 0) return 0
    return (await session.write(purge, [run.at(-1)!.position])).affectedRows
  }
}
