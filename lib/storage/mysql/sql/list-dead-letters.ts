// listDeadLetters on MySQL: a page of a subscription's dead letters in feed order, after a dead letter or an event of the feed.
import type { StoredDeadLetter, SubscriptionsCapability } from '../../order-storage.js'
import { parsedJson, textBytes, type Session } from '../client.js'
import type { Tables } from '../tables.js'

export function listDeadLetters ({ events, deadLetters }: Tables, session: Session): SubscriptionsCapability['listDeadLetters'] {
  // `after` is placed by its dead letter, which keeps the position once the feed purged the event, or
  // else by the feed.
  const after = `SELECT COALESCE((SELECT position FROM ${deadLetters} WHERE name = ? AND event_id = ?),
    (SELECT position FROM ${events} WHERE id = ?)) AS position`
  const page = `SELECT ${textBytes('event')} AS event, attempts, ${textBytes('error')} AS error, CAST(at AS CHAR) AS at FROM ${deadLetters}
    WHERE name = ? AND position > ? ORDER BY position LIMIT ?`

  return async (name, query): Promise<StoredDeadLetter[] | undefined> => {
    let from: string | null = '0'
    if (query.after !== undefined) [{ position: from }] = await session.run<{ position: string | null }>(after, [name, query.after, query.after]) as [{ position: string | null }]
    if (from === null) return undefined
    const rows = await session.run<{ event: Buffer, attempts: number, error: Buffer, at: string }>(page, [name, from, query.limit])
    return rows.map(({ event, attempts, error, at }) => ({ event: parsedJson(event), attempts, error: parsedJson(error), at }))
  }
}
