// readChangeClaim on PostgreSQL: the live claim of a change's idempotency key, with the order as that change left it.
import type { ChangesCapability } from '../../order-storage.js'
import { columnText, type Run } from '../client.js'
import type { Tables } from '../tables.js'

export function readChangeClaim ({ keys }: Tables, run: Run): ChangesCapability['readChangeClaim'] {
  // A create's key has no answer: it is never a change's, whose spelling differs.
  const text = `SELECT fingerprint::text AS fingerprint, answer::text AS answer FROM ${keys}
    WHERE key = $1::text AND expires_at > $2::text AND answer IS NOT NULL`
  return async function readChangeClaim (key, now) {
    const [row] = await run<{ fingerprint: string, answer: string }>(text, [columnText(key), now])
    return row === undefined ? undefined : { fingerprint: JSON.parse(row.fingerprint), order: JSON.parse(row.answer) }
  }
}
