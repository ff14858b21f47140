// Layout version 4: stores. A nullable column, the indexes of a store's pages, and references unique per customer within a store.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'

/**
 * Version 4: the store an order belongs to. The column comes nullable (a catalog change: orders stored
 * before have none, and need no backfill). A store's pages walk indexes led by it, partial on orders
 * that have one, so a shop without stores keeps the cost of its creates. The unique reference index is
 * rebuilt to include the store (orders without one count as one more store, '' which no store key
 * is): the new one is built first, so a reference is never unguarded, then the old one dropped. Every
 * index is built or dropped CONCURRENTLY.
 */
function stores ({ orders, indexes }: Tables): string[] {
  const hasStore = 'WHERE store IS NOT NULL'
  return [
    `ALTER TABLE ${orders} ADD COLUMN IF NOT EXISTS store text COLLATE "C"`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeCreated} ON ${orders} (store, created_at, id) ${hasStore}`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeCustomer} ON ${orders} (store, customer_id, created_at, id) ${hasStore}`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeStatus} ON ${orders} (store, status, created_at, id) ${hasStore}`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeCustomerStatus} ON ${orders} (store, customer_id, status, created_at, id) ${hasStore}`,
    `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeReference} ON ${orders} (customer_id, reference, (coalesce(store, ''))) WHERE reference IS NOT NULL`,
    `DROP INDEX CONCURRENTLY IF EXISTS ${indexes.reference}`
  ]
}

export const version4: LayoutStep = tables => ({
  version: 4,
  summary: 'Stores: a nullable store column (a catalog change, a brief ACCESS EXCLUSIVE lock); the indexes of a ' +
      'store\'s pages, partial on orders with a store, built CONCURRENTLY (writes go on); the unique reference index ' +
      'rebuilt CONCURRENTLY as (customer, reference, store), the new one built before the old one is dropped.',
  statements: stores(tables)
})
