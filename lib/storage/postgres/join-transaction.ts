// Orders inside a transaction the host opened: the same statements on its client, and the outcome learned from the database.
import { setTimeout as sleep } from 'node:timers/promises'
import { codes } from '../../errors.js'
import { checkedFirst, type JoinedStorage } from '../order-storage.js'
import { runnerOf, type PostgresClient, type Run } from './client.js'
import { createOrder } from './sql/create-order.js'
import { getOrder } from './sql/get-order.js'
import { listOrders } from './sql/list-orders.js'
import { checkOpenTransaction } from './open-transaction.js'
import { readChangeClaim } from './sql/read-change-claim.js'
import { replaceOrder } from './sql/replace-order.js'
import type { Tables } from './tables.js'

/** How long the first look at a transaction's outcome waits, and the longest wait between two looks. */
const FIRST_LOOK = 5
const LONGEST_LOOK = 500

// SQLSTATEs of a transaction PostgreSQL aborted because it lost a race: a serialization failure
// (REPEATABLE READ, SERIALIZABLE) and a deadlock. The host retries the transaction as a whole.
const LOST_RACE = new Set(['40001', '40P01'])

/** The events a transaction wrote through joined storages, and, once asked, the look at how it ended. */
interface Transaction {
  events: Set<string>
  committed?: Promise<Set<string>>
}

/**
 * What the storage knows of the host's transactions it wrote in: each one's outcome is looked up
 * once, however many changes it made, on the storage's own client (`query`): `pg_xact_status` of the
 * transaction id each write reports until it has ended, then which of its events are there (a
 * rollback to a savepoint of the host's may have undone some).
 */
export function transactionOutcomes ({ events }: Tables, query: Run) {
  const byTx = new Map<string, Transaction>()
  const txOf = new Map<string, string>()
  const status = 'SELECT pg_xact_status($1::xid8) AS status'
  const stored = `SELECT id::text FROM ${events} WHERE id = ANY($1::uuid[])`

  async function outcomeOf (tx: string, transaction: Transaction, signal: AbortSignal): Promise<Set<string>> {
    let ended: string | null = 'in progress'
    for (let wait = FIRST_LOOK; ended === 'in progress'; wait = Math.min(wait * 2, LONGEST_LOOK)) {
      await sleep(wait, undefined, { signal })
      ended = (await query<{ status: string | null }>(status, [tx]))[0]!.status
    }
    byTx.delete(tx)
    for (const eventId of transaction.events) txOf.delete(eventId)
    if (ended === 'aborted') return new Set()
    return new Set((await query<{ id: string }>(stored, [[...transaction.events]])).map(row => row.id))
  }

  return {
    /** A change stored the event `eventId` in the transaction `tx`. */
    written (eventId: string, tx: string): void {
      let transaction = byTx.get(tx)
      if (transaction === undefined) byTx.set(tx, transaction = { events: new Set() })
      transaction.events.add(eventId)
      txOf.set(eventId, tx)
    },
    /** Whether the transaction that stored `eventId` committed with it, once it has ended. */
    async settled (eventId: string, signal: AbortSignal): Promise<boolean> {
      const tx = txOf.get(eventId)!
      const transaction = byTx.get(tx)!
      transaction.committed ??= outcomeOf(tx, transaction, signal)
      return (await transaction.committed).has(eventId)
    }
  }
}

export type TransactionOutcomes = ReturnType<typeof transactionOutcomes>

/**
 * Orders whose statements run on `client`, inside the host's transaction; `outcomes` learns how each
 * transaction ended. A pool is refused: its statements would each run, and commit, on any connection.
 */
export function joinTransaction (tables: Tables, outcomes: TransactionOutcomes, client: unknown): JoinedStorage {
  const given = client as (PostgresClient & { totalCount?: unknown, connect?: unknown }) | null
  if (typeof given?.query !== 'function') {
    throw new codes.ORDER_INVALID_OPTIONS('withTransaction needs the client the transaction runs on: a pg.Client (from pool.connect()) or a PGlite transaction, with query(text, params)')
  }
  if (typeof given.connect === 'function' && typeof given.totalCount === 'number') {
    throw new codes.ORDER_INVALID_OPTIONS('withTransaction needs the client of a transaction, not a pool: take one with pool.connect(), run BEGIN on it, pass it here, then COMMIT and release it')
  }
  // Never named: behind a pooler that loses named statements, the failed one would abort the host's
  // transaction, which no retry can undo. An unnamed statement is parsed on the connection it runs on.
  const { query: run } = runnerOf(given, false)
  const replace = replaceOrder(tables, run, outcomes.written)
  const create = createOrder(tables, run, outcomes.written, true)
  const get = getOrder(tables, run)
  const list = listOrders(tables, run)
  const opened = () => checkOpenTransaction(given, run)

  return {
    ...checkedFirst(opened, { create, get, list }),
    async replace (order, expectedVersion, event, claim) {
      try {
        return await replace(order, expectedVersion, event, claim)
      } catch (err) {
        // PostgreSQL aborted the host's transaction: no retry inside it can succeed.
        if (LOST_RACE.has((err as { code?: string }).code!)) throw new codes.ORDER_VERSION_CONFLICT(order.id, expectedVersion)
        throw err
      }
    },
    readChangeClaim: readChangeClaim(tables, run),
    settled: outcomes.settled
  }
}
