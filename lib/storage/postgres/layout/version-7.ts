// Layout version 7: changes after placement: each order's balance sign (backfilled in batches) with the indexes of its pages, and the answer of a change's idempotency key.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'
import { REPEAT } from './step.js'

/** How many orders one backfill statement signs: a short transaction that locks only those rows. */
const BACKFILL_BATCH = 1000

/**
 * Signs the balance of up to 1,000 orders stored without a sign (by a release before this layout: their
 * balance is their total, as they have no `balance`; a document without either counts as 0, so that
 * every order gets a sign and the backfill ends), found through the balance index, where unsigned
 * orders sort last. Returns a row per order signed; run until it returns none. The plugin also runs it
 * at every start, for orders an instance of an earlier release stored while this one upgraded.
 */
export function signBackfill ({ orders }: Tables): string {
  return `${REPEAT}WITH batch AS (
      SELECT id FROM ${orders} WHERE balance_sign IS NULL LIMIT ${BACKFILL_BATCH} FOR UPDATE
    )
    UPDATE ${orders} AS o SET balance_sign = sign(coalesce(o.document->>'balance', o.document->>'total', '0')::numeric)
    FROM batch WHERE o.id = batch.id
    RETURNING 1`
}

/**
 * Version 7: changes after placement. Orders get a nullable `balance_sign` (-1, 0 or 1; a catalog
 * change), which creates and replaces write from the order's balance, so that `filter.balance` is a walk
 * of an index led by the columns the filter fixes, as every other page is: one index per shape of
 * (store, customer, status) with the sign after the store and the customer, those of a store partial on
 * orders with one, as version 4's are. The (balance_sign, created_at, id) index is built first, so the
 * backfill finds the orders left to sign without reading the others. Idempotency keys get a nullable
 * `answer`: the order as the change that claimed the key left it (a create's key has none, its answer
 * being the order it names). Every index is built CONCURRENTLY: writes go on.
 */
function balances (tables: Tables): string[] {
  const { orders, keys, indexes } = tables
  const hasStore = 'WHERE store IS NOT NULL'
  return [
    `ALTER TABLE ${orders} ADD COLUMN IF NOT EXISTS balance_sign smallint`,
    `ALTER TABLE ${keys} ADD COLUMN IF NOT EXISTS answer json`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.balanceCreated} ON ${orders} (balance_sign, created_at, id)`,
    signBackfill(tables),
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.balanceStatus} ON ${orders} (balance_sign, status, created_at, id)`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.customerBalance} ON ${orders} (customer_id, balance_sign, created_at, id)`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.customerBalanceStatus} ON ${orders} (customer_id, balance_sign, status, created_at, id)`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeBalance} ON ${orders} (store, balance_sign, created_at, id) ${hasStore}`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeBalanceStatus} ON ${orders} (store, balance_sign, status, created_at, id) ${hasStore}`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeCustomerBalance} ON ${orders} (store, customer_id, balance_sign, created_at, id) ${hasStore}`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeCustomerBalanceStatus} ON ${orders} (store, customer_id, balance_sign, status, created_at, id) ${hasStore}`
  ]
}

export const version7: LayoutStep = tables => ({
  version: 7,
  summary: 'Changes after placement: a nullable balance_sign column on orders and a nullable answer column on ' +
      'idempotency keys (catalog changes, a brief ACCESS EXCLUSIVE lock each); existing orders signed from their ' +
      'total, 1,000 rows per transaction (row locks only); the eight indexes of balance pages built CONCURRENTLY ' +
      '(writes go on).',
  statements: balances(tables)
})
