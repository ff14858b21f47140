// purgeIdempotencyKeys on PostgreSQL: expired keys, oldest first, a bounded batch at a time.
import type { OrdersCapability } from '../../order-storage.js'
import type { Run } from '../client.js'
import type { Tables } from '../tables.js'

export function purgeIdempotencyKeys ({ keys }: Tables, run: Run): OrdersCapability['purgeIdempotencyKeys'] {
  // Skipping any key a concurrent create is taking over.
  const text = `DELETE FROM ${keys} WHERE key IN (
      SELECT key FROM ${keys} WHERE expires_at <= $1::text ORDER BY expires_at LIMIT $2::int FOR UPDATE SKIP LOCKED)
    RETURNING 1`
  return async (now, limit) => (await run(text, [now, limit])).length
}
