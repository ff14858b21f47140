// The OrderStorage interface: what the plugin needs from a database, and nothing of its business rules.
import type { Order } from '../schemas.js'

/** The idempotency key a create claims, stored atomically with the order it created. */
export interface IdempotencyClaim {
  /** The key as scoped by the plugin: the same client key under two scopes gives two claims. */
  key: string
  /** A digest of the request body; a replay with another body is told apart by it. */
  fingerprint: string
  /** ISO timestamp after which the key is free again. A key whose `expiresAt` is at or before the new order's `createdAt` counts as expired. */
  expiresAt: string
}

export type CreateResult =
  /** The order was stored (and the claim with it, when one was given). */
  | { created: true, order: Order }
  /** The key was already claimed by a live claim: nothing was stored; here is the order it created. */
  | { created: false, order: Order, fingerprint: string }
  /** The key is claimed but its order cannot be read yet (for adapters that cannot tell). */
  | { created: false, inProgress: true }

/** One keyset page request. Filters combine with AND; an absent filter does not restrict. */
export interface StorageListQuery {
  customerId?: string
  /** Any of these statuses. */
  statuses?: readonly string[]
  /** Any of these ids (at most 100). */
  ids?: readonly string[]
  /** Inclusive lower bound on `createdAt` (ISO, UTC, milliseconds). */
  createdFrom?: string
  /** Exclusive upper bound on `createdAt`. */
  createdTo?: string
  /** `desc`: newest first, by (`createdAt`, `id`) descending. */
  order: 'asc' | 'desc'
  /** Only orders strictly after this position in the chosen order. */
  after?: { createdAt: string, id: string }
  /** How many orders at most. */
  limit: number
}

/**
 * Where orders live. Adapters only store: totals, workflow, limits and scope are the plugin's.
 * Every method may throw (or reject); the plugin turns that into 503 ORDER_STORAGE_UNAVAILABLE.
 * Orders passed in and returned are plain JSON values; the plugin never mutates what it gets back.
 */
export interface OrderStorage {
  /** Prepares the store (tables, indexes); the plugin awaits it at register, before serving. */
  init?: () => Promise<void>
  /**
   * Stores a new order. With a claim, stores the claim in the same atomic step, or stores nothing
   * and returns the order of the live claim already stored under `claim.key`.
   */
  create: (order: Order, claim?: IdempotencyClaim) => Promise<CreateResult>
  /** The order with this id, or undefined. */
  get: (id: string) => Promise<Order | undefined>
  /** A page of matching orders in the requested order, at most `limit` long. */
  list: (query: StorageListQuery) => Promise<Order[]>
  /**
   * Compare-and-set: replaces the stored order with the same id by `order` only if the stored
   * version is still `expectedVersion`. Returns whether it did.
   */
  replace: (order: Order, expectedVersion: number) => Promise<boolean>
}
