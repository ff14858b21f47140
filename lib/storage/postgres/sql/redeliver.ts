// redeliver on PostgreSQL: puts a subscription's dead letters (all, or those of the events named) back for redelivery.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function redeliver ({ deadLetters }: Tables, run: Run): SubscriptionsCapability['redeliver'] {
  const text = `UPDATE ${deadLetters} SET redeliver = true
    WHERE name = $1::text AND ($2::uuid[] IS NULL OR event_id = ANY($2::uuid[]))
    RETURNING 1`
  return async (name, eventIds) => (await run(text, [name, eventIds ?? null])).length
}
