// A change's idempotency claim on MySQL: made (or an expired one taken over) in the transaction that stores the change, with the order as the change leaves it; and readChangeClaim.
import { createHash } from 'node:crypto'
import type { Order } from '../../../http/schemas.js'
import type { ChangesCapability, IdempotencyClaim } from '../../order-storage.js'
import { columnText, duplicateKey, parsedJson, textBytes, type Session } from '../client.js'
import type { Tables } from '../tables.js'

/** The key as the keys table holds it: the SHA-256 of the scoped key, as a create's. */
const keyHashOf = (key: string) => createHash('sha256').update(columnText(key)).digest()

/**
 * The statements of a change's claim. `claim` makes it for `order` (as the change leaves it) and says
 * whether it did: false while a live claim of the key (one expiring after the order's `updatedAt`) is
 * stored. `unclaim` removes the claim it made, from a change that was not stored after all.
 */
export function changeClaims ({ keys }: Tables) {
  const insert = `INSERT INTO ${keys} (key_hash, fingerprint, order_id, expires_at, answer) VALUES (?, ?, ?, ?, ?)`
  // A locking read sees the claim as committed now, whatever snapshot the transaction holds.
  const readExpiry = `SELECT CAST(expires_at AS CHAR) AS expires_at FROM ${keys} WHERE key_hash = ? LOCK IN SHARE MODE`
  const takeOver = `UPDATE ${keys} SET fingerprint = ?, order_id = ?, expires_at = ?, answer = ? WHERE key_hash = ?`
  const remove = `DELETE FROM ${keys} WHERE key_hash = ? AND order_id = ?`
  return {
    async claim ({ write, run }: Session, order: Order, { key, fingerprint, expiresAt }: IdempotencyClaim): Promise<boolean> {
      const values = [JSON.stringify(fingerprint), columnText(order.id), expiresAt, JSON.stringify(order)]
      try {
        await write(insert, [keyHashOf(key), ...values])
        return true
      } catch (err) {
        if (duplicateKey(err) !== 'PRIMARY') throw err
      }
      // The duplicate left this transaction a shared lock on the claim: no one removes or takes it meanwhile.
      const [live] = await run<{ expires_at: string }>(readExpiry, [keyHashOf(key)]) as [{ expires_at: string }]
      if (live.expires_at > order.updatedAt) return false
      // Expired: taken over. Two changes taking it over at once deadlock, and the loser runs again.
      await write(takeOver, [...values, keyHashOf(key)])
      return true
    },
    async unclaim ({ write }: Session, order: Order, { key }: IdempotencyClaim): Promise<void> {
      await write(remove, [keyHashOf(key), columnText(order.id)])
    }
  }
}

export function readChangeClaim ({ keys }: Tables, session: Session, locking = false): ChangesCapability['readChangeClaim'] {
  // A create's key has no answer: it is never a change's, whose spelling differs. In the host's
  // transaction (`locking`), the read sees claims committed after its snapshot, as the claim's insert does.
  const text = `SELECT ${textBytes('fingerprint')} AS fingerprint, ${textBytes('answer')} AS answer FROM ${keys} WHERE key_hash = ? AND expires_at > ? AND answer IS NOT NULL${locking ? ' LOCK IN SHARE MODE' : ''}`
  return async function readChangeClaim (key, now) {
    const [row] = await session.run<{ fingerprint: Buffer, answer: Buffer }>(text, [keyHashOf(key), now])
    return row === undefined ? undefined : { fingerprint: parsedJson(row.fingerprint), order: parsedJson(row.answer) }
  }
}
