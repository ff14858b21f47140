// purgeIdempotencyKeys on MySQL: expired keys, oldest first, a bounded batch at a time.
import type { OrdersCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'

export function purgeIdempotencyKeys ({ keys }: Tables, session: Session): OrdersCapability['purgeIdempotencyKeys'] {
  // One statement, walking the expiry index from its oldest end.
  const text = `DELETE FROM ${keys} WHERE expires_at <= ? ORDER BY expires_at LIMIT ?`
  return async (now, limit) => (await session.write(text, [now, limit])).affectedRows
}
