// readSubscription on MySQL: the listed events after a subscription's checkpoint (or an event it read), none it finished.
import type { SubscriptionsCapability } from '../../order-storage.js'
import { parsedJson, textBytes, type Session } from '../client.js'
import type { Tables } from '../tables.js'

/** The events after feed position `?` that subscription `?` has not finished, in feed order, at most `?`. */
export function unfinishedAfter ({ events, finished }: Tables, columns: string): string {
  return `SELECT ${columns} FROM ${events} AS e
    WHERE e.position > ? AND NOT EXISTS (SELECT 1 FROM ${finished} AS f WHERE f.name = ? AND f.position = e.position)
    ORDER BY e.position LIMIT ?`
}

export function readSubscription (tables: Tables, session: Session, sequence: () => Promise<void>): SubscriptionsCapability['readSubscription'] {
  // Without an event read earlier (or with one that is gone), the page starts after the checkpoint.
  const start = `SELECT COALESCE(a.position, s.position) AS position FROM ${tables.subscriptions} AS s
    LEFT JOIN ${tables.events} AS a ON a.id = ? WHERE s.name = ?`
  const page = unfinishedAfter(tables, `${textBytes('e.payload')} AS payload`)

  return async (name, limit, after) => {
    await sequence()
    const [from] = await session.run<{ position: string }>(start, [after ?? null, name])
    if (from === undefined) return []
    return (await session.run<{ payload: Buffer }>(page, [from.position, name, limit])).map(row => parsedJson(row.payload))
  }
}
