// createOrder on MySQL: claims the idempotency key, stores the order (numbered by AUTO_INCREMENT) and its created event, in one transaction.
import { createHash } from 'node:crypto'
import { eventJson } from '../../../feed/events.js'
import type { CreateResult, OrdersCapability } from '../../order-storage.js'
import { columnText, duplicateKey, lostRace, parsedJson, textBytes, type Session } from '../client.js'
import { orderIndexes, type Tables } from '../tables.js'
import { ORDER_DOCUMENT, orderColumns } from './get-order.js'

/** Runs work in a transaction: one of the storage's own, or the host's (joinTransaction). */
export type Transaction = <T>(work: (session: Session) => Promise<T>) => Promise<T>

/**
 * createOrder's statements, in `transaction`. Nothing of a create may stay when it does not store its
 * order: a taken reference removes the claim it made, and in the host's transaction (`joined`), where
 * a failed statement undoes only itself, an event that cannot be stored removes the order and claim
 * written before it (and join-transaction.ts rolls the call back to its savepoint after any error).
 */
export function createOrder ({ orders, keys, events }: Tables, transaction: Transaction, joined = false): OrdersCapability['create'] {
  const claimKey = `INSERT INTO ${keys} (key_hash, fingerprint, order_id, expires_at) VALUES (?, ?, ?, ?)`
  // A locking read sees the claim as committed now, whatever snapshot the transaction holds.
  const readClaim = `SELECT ${textBytes('fingerprint')} AS fingerprint, order_id, CAST(expires_at AS CHAR) AS expires_at FROM ${keys} WHERE key_hash = ? LOCK IN SHARE MODE`
  const readOrder = `SELECT ${ORDER_DOCUMENT} FROM ${orders} WHERE id = ?`
  const takeOver = `UPDATE ${keys} SET fingerprint = ?, order_id = ?, expires_at = ? WHERE key_hash = ?`
  const unclaim = `DELETE FROM ${keys} WHERE key_hash = ? AND order_id = ?`
  const insertOrder = `INSERT INTO ${orders} (id, customer_id, status, store, reference, created_at, version, document, balance_sign) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
  const insertEvent = `INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at) VALUES (?, 'order', ?, 'created', ?, ?)`
  const removeOrder = `DELETE FROM ${orders} WHERE id = ?`

  return (order, event, claim) => transaction(async ({ run, write }): Promise<CreateResult> => {
    const columns = orderColumns(order)
    const keyHash = claim === undefined ? undefined : createHash('sha256').update(columnText(claim.key)).digest()
    if (claim !== undefined) {
      try {
        await write(claimKey, [keyHash, JSON.stringify(claim.fingerprint), columns[0], claim.expiresAt])
      } catch (err) {
        if (duplicateKey(err) !== 'PRIMARY') throw err
        // The duplicate left this transaction a shared lock on the claim: no one removes or takes it meanwhile.
        const [live] = await run<{ fingerprint: Buffer, order_id: Buffer, expires_at: string }>(readClaim, [keyHash]) as [{ fingerprint: Buffer, order_id: Buffer, expires_at: string }]
        if (live.expires_at > order.createdAt) {
          const [first] = await run<{ document: Buffer }>(readOrder, [live.order_id])
          return first === undefined ? { created: false, inProgress: true } : { created: false, order: parsedJson(first.document), fingerprint: parsedJson(live.fingerprint) }
        }
        // Expired: taken over. Two creates taking it over at once deadlock, and the loser runs again.
        await write(takeOver, [JSON.stringify(claim.fingerprint), columns[0], claim.expiresAt, keyHash])
      }
    }
    let number: number
    try {
      number = (await write(insertOrder, columns)).insertId
    } catch (err) {
      if (duplicateKey(err) !== orderIndexes.storeReference) throw err
      if (keyHash !== undefined) await write(unclaim, [keyHash, columns[0]])
      return { created: false, referenceTaken: true }
    }
    // The document column's JSON (the order without its number), with the number put first, as a read puts it.
    const orderJson = `{"number":${number},${(columns[7] as string).slice(1)}`
    try {
      await write(insertEvent, [event.id, columns[0], eventJson(event, orderJson), event.at])
    } catch (err) {
      if (joined && !lostRace(err)) {
        await write(removeOrder, [columns[0]])
        if (keyHash !== undefined) await write(unclaim, [keyHash, columns[0]])
      }
      throw err
    }
    return { created: true, order: { ...order, number } }
  })
}
