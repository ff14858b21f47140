// release on PostgreSQL: gives up the lease if the holder holds it.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function release ({ subscriptions }: Tables, run: Run): SubscriptionsCapability['release'] {
  const text = `UPDATE ${subscriptions} SET holder = NULL, lease_expires_at = NULL WHERE name = $1::text AND holder = $2::text`
  return async (name, holder) => {
    await run(text, [name, holder])
  }
}
