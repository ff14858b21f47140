// Layout version 6: a store's orders of one reference, in page order, so a store-scoped reference page is one bounded walk.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'

/**
 * Version 6: the index of a store's orders of one reference, (store, reference, created_at, id),
 * partial on orders with both. Without it, a reference page under a store scope walked that
 * reference's orders in every store and threw the other stores' away: its time grew with them, and
 * told a store how many other stores' orders use a reference. Built CONCURRENTLY: writes go on.
 */
function storeReferences ({ orders, indexes }: Tables): string[] {
  return [
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.storeReferenceCreated} ON ${orders} (store, reference, created_at, id) WHERE store IS NOT NULL AND reference IS NOT NULL`
  ]
}

export const version6: LayoutStep = tables => ({
  version: 6,
  summary: 'A store\'s orders of one reference in page order: the (store, reference, created_at, id) index, ' +
      'partial on orders with both, built CONCURRENTLY (writes go on).',
  statements: storeReferences(tables)
})
