// listEvents on MySQL: positions given to what committed, then a page of the feed after an event's position.
import type { OrderEvent } from '../../../feed/events.js'
import type { FeedCapability } from '../../order-storage.js'
import { parsedJson, textBytes, type Session } from '../client.js'
import type { Tables } from '../tables.js'

export function listEvents ({ events }: Tables, session: Session, sequence: () => Promise<void>): FeedCapability['listEvents'] {
  const firstEvents = `SELECT ${textBytes('payload')} AS payload FROM ${events} WHERE position IS NOT NULL ORDER BY position LIMIT ?`
  const positionOf = `SELECT position FROM ${events} WHERE id = ?`
  const eventsAfter = `SELECT ${textBytes('payload')} AS payload FROM ${events} WHERE position > ? ORDER BY position LIMIT ?`

  return async function list ({ after, limit }): Promise<OrderEvent[] | undefined> {
    await sequence()
    if (after === undefined) return (await session.run<{ payload: Buffer }>(firstEvents, [limit])).map(row => parsedJson(row.payload))
    const [named] = await session.run<{ position: string | null }>(positionOf, [after])
    if (named === undefined) return undefined
    // An event not positioned yet was never listed: nothing is after it yet (`position > NULL` is no row).
    return (await session.run<{ payload: Buffer }>(eventsAfter, [named.position, limit])).map(row => parsedJson(row.payload))
  }
}
