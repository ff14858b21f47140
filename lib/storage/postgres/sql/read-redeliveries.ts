// readRedeliveries on PostgreSQL: the events of a subscription's dead letters put back for redelivery, in feed order.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function readRedeliveries ({ deadLetters }: Tables, run: Run): SubscriptionsCapability['readRedeliveries'] {
  const text = `SELECT event::text AS payload FROM ${deadLetters} WHERE name = $1::text AND redeliver
    ORDER BY epoch, tx, seq LIMIT $2::int`
  return async (name, limit) => (await run<{ payload: string }>(text, [name, limit])).map(row => JSON.parse(row.payload))
}
