// withTransaction's client must be inside a transaction: without BEGIN, each statement would commit on its own.
import { codes } from '../../errors.js'
import type { Run } from './client.js'

const NO_TRANSACTION = 'withTransaction needs a transaction open on its client: run BEGIN on it first (await client.query(\'BEGIN\')), then the calls, then COMMIT; without it each call would commit on its own, apart from your writes'

// SQLSTATE of "SAVEPOINT can only be used in transaction blocks".
const NO_TRANSACTION_BLOCK = '25P01'

/** Whether the client says it is inside a transaction: pg's transaction status, PGlite's flag; undefined when it cannot say. */
function saysOpen (client: object): boolean | undefined {
  const { getTransactionStatus, isInTransaction } = client as { getTransactionStatus?: () => string | null, isInTransaction?: () => boolean }
  // 'T' in a transaction, 'E' in a failed one (its statements fail on their own), 'I' idle.
  if (typeof getTransactionStatus === 'function') return ['T', 'E'].includes(getTransactionStatus.call(client)!)
  if (typeof isInTransaction === 'function') return isInTransaction.call(client)
  return undefined
}

// Clients the database confirmed inside a transaction, for those that cannot say: a PGlite transaction is one per transaction.
const confirmed = new WeakSet<object>()

/**
 * Throws ORDER_INVALID_OPTIONS unless `client` is inside a transaction. A client that says so costs
 * nothing; otherwise the database is asked, with a savepoint that only a transaction block accepts,
 * once per client that cannot say (a PGlite transaction), or whenever one says it is idle (its
 * BEGIN may still be queued on it).
 */
export async function checkOpenTransaction (client: object, run: Run): Promise<void> {
  const open = saysOpen(client)
  if (open === true || (open === undefined && confirmed.has(client))) return
  try {
    await run('SAVEPOINT fastify_order_in_transaction', [])
  } catch (err) {
    if ((err as { code?: unknown }).code === NO_TRANSACTION_BLOCK) throw new codes.ORDER_INVALID_OPTIONS(NO_TRANSACTION)
    throw err
  }
  await run('RELEASE SAVEPOINT fastify_order_in_transaction', [])
  if (open === undefined) confirmed.add(client)
}
