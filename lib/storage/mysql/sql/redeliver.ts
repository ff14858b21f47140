// redeliver on MySQL: puts a subscription's dead letters (all, or those of the events named) back for redelivery.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'

export function redeliver ({ deadLetters }: Tables, session: Session): SubscriptionsCapability['redeliver'] {
  // A count that always moves: every dead letter found is a row changed, whatever CLIENT_FOUND_ROWS says.
  const all = `UPDATE ${deadLetters} SET redeliver = redeliver + 1 WHERE name = ?`
  const named = `${all} AND event_id IN (?)`
  return async (name, eventIds) => {
    if (eventIds?.length === 0) return 0
    return (await (eventIds === undefined ? session.write(all, [name]) : session.write(named, [name, eventIds]))).affectedRows
  }
}
