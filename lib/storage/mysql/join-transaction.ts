// Orders inside a transaction the host opened on a mysql2 connection: the same statements on it, and the outcome learned from the database.
import { setTimeout as sleep } from 'node:timers/promises'
import { codes } from '../../errors.js'
import { checkedFirst, type JoinedStorage } from '../order-storage.js'
import { isPool, lostRace, sessionOf, type MysqlClient, type Session } from './client.js'
import { createOrder, type Transaction } from './sql/create-order.js'
import { getOrder } from './sql/get-order.js'
import { checkOpenTransaction } from './open-transaction.js'
import { listOrders } from './sql/list-orders.js'
import { readChangeClaim } from './sql/claim-change.js'
import { replaceWith, type Replaced } from './sql/replace-order.js'
import type { Tables } from './tables.js'

/** How long the first look at a transaction's outcome waits, and the longest wait between two looks. */
const FIRST_LOOK = 5
const LONGEST_LOOK = 500

// What NOWAIT answers while another transaction holds the row: MariaDB's 1205, MySQL's 3572.
const IN_PROGRESS = new Set([1205, 3572])

/**
 * Runs each call's statements on `session` behind a savepoint, rolled back to on any error and
 * released on success: a failed statement undoes only itself (a lock wait timeout, 1205, with
 * innodb_rollback_on_timeout off, the default), so without it the call's earlier writes (a move's
 * event, a create's idempotency claim) would stay in the host's transaction and commit with it. A
 * deadlock has rolled the whole transaction back, savepoint and all, so that rollback may itself fail:
 * the call's own error is the one passed on. Calls on one connection run one at a time (as the host's
 * awaits make them): another statement sent on it meanwhile would be undone with the call.
 */
function withSavepoint (session: Session): Transaction {
  return async work => {
    await session.write('SAVEPOINT fastify_order_call')
    try {
      const result = await work(session)
      await session.write('RELEASE SAVEPOINT fastify_order_call')
      return result
    } catch (err) {
      await session.write('ROLLBACK TO SAVEPOINT fastify_order_call').catch(() => {})
      throw err
    }
  }
}

/**
 * Whether the transaction that wrote the event `eventId` has ended, and how, asked on the storage's
 * own pool: a locking read of the event that does not wait (`FOR UPDATE NOWAIT`, in both MySQL 8 and
 * MariaDB) fails while the writer's transaction still holds the row, finds it once that committed, and
 * finds nothing once it rolled back (or a savepoint of the host's undid it).
 */
export function settledOf ({ events }: Tables, pool: MysqlClient): JoinedStorage['settled'] {
  const { run } = sessionOf(pool)
  const look = `SELECT 1 AS found FROM ${events} WHERE id = ? FOR UPDATE NOWAIT`
  /** Whether the event is there, or undefined while its transaction runs. */
  const lookAt = async (eventId: string): Promise<boolean | undefined> => {
    try {
      return (await run(look, [eventId])).length === 1
    } catch (err) {
      if (!IN_PROGRESS.has((err as { errno?: number }).errno!)) throw err
      return undefined
    }
  }
  return async (eventId, signal) => {
    let committed: boolean | undefined
    for (let wait = FIRST_LOOK; committed === undefined; wait = Math.min(wait * 2, LONGEST_LOOK)) {
      await sleep(wait, undefined, { signal })
      committed = await lookAt(eventId)
    }
    return committed
  }
}

/**
 * Orders whose statements run on `connection`, inside the host's transaction, each call behind a
 * savepoint so that nothing of a call that fails stays there. A pool is refused: its statements would
 * each run, and commit, on any connection. A lost race is the host's to retry: a move is ORDER_VERSION_CONFLICT, as is a move
 * whose order another writer changed meanwhile. The open
 * transaction is checked at the first call, once for all the calls of this withTransaction (one per
 * transaction: a connection of the pool serves many, so no more than that can be remembered).
 */
export function joinTransaction (tables: Tables, settled: JoinedStorage['settled'], connection: unknown): JoinedStorage {
  if (isPool(connection)) {
    throw new codes.ORDER_INVALID_OPTIONS('withTransaction needs the connection of a transaction, not a pool: take one with pool.getConnection(), run beginTransaction() on it, pass it here, then commit() and release() it')
  }
  const given = connection as { query?: unknown, execute?: unknown, beginTransaction?: unknown } | null
  if (typeof given?.query !== 'function' || typeof given.execute !== 'function' || typeof given.beginTransaction !== 'function') {
    throw new codes.ORDER_INVALID_OPTIONS('withTransaction needs the mysql2/promise connection the transaction runs on: one from pool.getConnection(), on which beginTransaction() ran')
  }
  const session: Session = sessionOf(given as Parameters<typeof sessionOf>[0])
  const transaction = withSavepoint(session)
  const replace = replaceWith(tables, transaction, true)
  const create = createOrder(tables, transaction, true)
  const get = getOrder(tables, session)
  const list = listOrders(tables, session)
  let open = false
  const opened = async () => {
    if (open) return
    await checkOpenTransaction(given as Parameters<typeof checkOpenTransaction>[0])
    open = true
  }
  return {
    ...checkedFirst(opened, { create, get, list }),
    // A version changed by another writer is the host's conflict at once: under InnoDB's REPEATABLE READ
    // the host's snapshot still shows the order as it was, so reading it again, and running its guard
    // again, could never store the move. A live claim of a change's key is no conflict: the plugin
    // answers with the order that claim's change left.
    async replace (order, expectedVersion, event, claim) {
      let replaced: Replaced
      try {
        replaced = await replace(order, expectedVersion, event, claim)
      } catch (err) {
        if (lostRace(err)) throw new codes.ORDER_VERSION_CONFLICT(order.id, expectedVersion)
        throw err
      }
      if (replaced === 'stale') throw new codes.ORDER_VERSION_CONFLICT(order.id, expectedVersion)
      return replaced === 'stored'
    },
    readChangeClaim: readChangeClaim(tables, session, true),
    settled
  }
}
