// Layout version 2 of the MySQL storage: changes after placement: each order's balance sign (backfilled in batches) with the indexes of its pages, and the answer of a change's idempotency key.
import { orderIndexes as index } from '../tables.js'
import type { Tables } from '../tables.js'
import { REPEAT, type LayoutStep } from './step.js'

/** How many orders one backfill statement signs: a short transaction that locks only those rows. */
const BACKFILL_BATCH = 1000

/**
 * Signs the balance of up to 1,000 orders stored without a sign (by a release before this layout: their
 * balance is their total, as they have no `balance`; a document without either counts as 0, so that
 * every order gets a sign and the backfill ends), found through the balance index, where unsigned
 * orders sort first. Run until it changes no row. The plugin also runs it at every start, for orders an
 * instance of an earlier release stored while this one upgraded.
 */
export function signBackfill ({ orders }: Tables): string {
  const amount = (path: string) => `JSON_UNQUOTE(JSON_EXTRACT(document, '${path}'))`
  return `${REPEAT}UPDATE ${orders} SET balance_sign = SIGN(CAST(COALESCE(${amount('$.balance')}, ${amount('$.total')}, '0') AS SIGNED))
    WHERE balance_sign IS NULL LIMIT ${BACKFILL_BATCH}`
}

// Built in place while writes go on, or refused: never a copy of the table under a lock.
const ONLINE = 'ALGORITHM=INPLACE, LOCK=NONE'

/**
 * Version 2: changes after placement. Orders get a nullable `balance_sign` (-1, 0 or 1), which creates
 * and replaces write from the order's balance, so that `filter.balance` is a walk of an index led by the
 * columns the filter fixes, as every other page is: one index per shape of (store, customer, status),
 * with the sign after the store and the customer. The (balance_sign, created_at, id) index is built
 * first, so the backfill finds the orders left to sign without reading the others. Idempotency keys get
 * a nullable `answer`: the order as the change that claimed the key left it (a create's key has none, its
 * answer being the order it names). A statement that a failed upgrade already ran (a duplicate column or
 * index) counts as done when it runs again.
 */
function balances (tables: Tables): string[] {
  const { orders, keys } = tables
  return [
    `ALTER TABLE ${orders} ADD COLUMN balance_sign TINYINT NULL`,
    `ALTER TABLE ${keys} ADD COLUMN answer LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL`,
    `ALTER TABLE ${orders} ADD KEY ${index.balance} (balance_sign, created_at, id), ${ONLINE}`,
    signBackfill(tables),
    `ALTER TABLE ${orders}
      ADD KEY ${index.balanceStatus} (balance_sign, status, created_at, id),
      ADD KEY ${index.customerBalance} (customer_id, balance_sign, created_at, id),
      ADD KEY ${index.customerBalanceStatus} (customer_id, balance_sign, status, created_at, id),
      ADD KEY ${index.storeBalance} (store, balance_sign, created_at, id),
      ADD KEY ${index.storeBalanceStatus} (store, balance_sign, status, created_at, id),
      ADD KEY ${index.storeCustomerBalance} (store, customer_id, balance_sign, created_at, id),
      ADD KEY ${index.storeCustomerBalanceStatus} (store, customer_id, balance_sign, status, created_at, id), ${ONLINE}`
  ]
}

export const version2: LayoutStep = tables => ({
  version: 2,
  summary: 'Changes after placement: a nullable balance_sign column on orders and a nullable answer column on ' +
    'idempotency keys; existing orders signed from their total, 1,000 rows per statement; the eight indexes of ' +
    'balance pages built in place while writes go on.',
  statements: balances(tables)
})
