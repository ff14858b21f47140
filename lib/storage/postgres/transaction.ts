// Orders inside a transaction the host opened: the same statements on its client, and the outcome learned from the database.
import { setTimeout as sleep } from 'node:timers/promises'
import { codes } from '../../errors.js'
import type { TransactionOrderStore } from '../types.js'
import { runnerOf, type PostgresClient, type Run } from './client.js'
import { listOrders } from './list.js'
import { orderStore } from './orders.js'
import type { Tables } from './tables.js'

/** How long the first look at a transaction's outcome waits, and the longest wait between two looks. */
const FIRST_LOOK = 5
const LONGEST_LOOK = 500

/** What PostgreSQL says of a transaction (`in progress`, `committed`, `aborted`, or null once forgotten), and whether the event is there. */
interface Outcome {
  status: string | null
  stored: boolean
}

/** The name of the savepoint a create with a reference runs under, so a taken reference leaves the host's transaction usable. */
const SAVEPOINT = 'fastify_order_create'

/**
 * Orders whose statements run on `client`, inside the host's transaction. `query` is the storage's
 * own client: it learns when that transaction has ended from `pg_xact_status` of the transaction id
 * each write reports, and whether the event is there, which a rollback to a savepoint would undo.
 */
export function transactionStore (tables: Tables, query: Run, client: unknown): TransactionOrderStore {
  if (typeof (client as PostgresClient | null)?.query !== 'function') {
    throw new codes.ORDER_INVALID_OPTIONS('withTransaction needs the client the transaction runs on: a pg.Client (from pool.connect()) or a PGlite transaction, with query(text, params)')
  }
  // Never named: behind a pooler that loses named statements, the failed one would abort the host's
  // transaction, which no retry can undo. An unnamed statement is parsed on the connection it runs on.
  const { query: run } = runnerOf(client as PostgresClient, false)
  const transactions = new Map<string, string>()
  const store = orderStore(tables, run, (eventId, tx) => transactions.set(eventId, tx))
  const look = `SELECT pg_xact_status($1::xid8) AS status, EXISTS (SELECT 1 FROM ${tables.events} WHERE id = $2::uuid) AS stored`

  return {
    ...store,
    async create (order, event, claim) {
      if (order.reference === undefined) return store.create(order, event, claim)
      // A taken reference is a failed statement, which would abort the whole transaction.
      await run(`SAVEPOINT ${SAVEPOINT}`, [])
      const result = await store.create(order, event, claim)
      await run(result.created === false && 'referenceTaken' in result ? `ROLLBACK TO SAVEPOINT ${SAVEPOINT}` : `RELEASE SAVEPOINT ${SAVEPOINT}`, [])
      return result
    },
    list: listOrders(tables, run),
    async settled (eventId, signal) {
      const tx = transactions.get(eventId)!
      transactions.delete(eventId)
      let outcome: Outcome = { status: 'in progress', stored: false }
      for (let wait = FIRST_LOOK; outcome.status === 'in progress'; wait = Math.min(wait * 2, LONGEST_LOOK)) {
        await sleep(wait, undefined, { signal })
        const [row] = await query<Outcome>(look, [tx, eventId])
        outcome = row!
      }
      return outcome.status !== 'aborted' && outcome.stored
    }
  }
}
