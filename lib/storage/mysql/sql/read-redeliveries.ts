// readRedeliveries on MySQL: the events of a subscription's dead letters put back for redelivery, in feed order.
import type { SubscriptionsCapability } from '../../order-storage.js'
import { parsedJson, textBytes, type Session } from '../client.js'
import type { Tables } from '../tables.js'

export function readRedeliveries ({ deadLetters }: Tables, session: Session): SubscriptionsCapability['readRedeliveries'] {
  const text = `SELECT ${textBytes('event')} AS event FROM ${deadLetters} WHERE name = ? AND redeliver > 0 ORDER BY position LIMIT ?`
  return async (name, limit) => (await session.run<{ event: Buffer }>(text, [name, limit])).map(row => parsedJson(row.event))
}
