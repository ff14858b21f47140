// release on MySQL: gives up the lease if the holder holds it.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'

export function release ({ subscriptions }: Tables, session: Session): SubscriptionsCapability['release'] {
  const text = `UPDATE ${subscriptions} SET holder = NULL, lease_expires_at = NULL, changes = changes + 1 WHERE name = ? AND holder = ?`
  return async (name, holder) => {
    await session.write(text, [name, holder])
  }
}
