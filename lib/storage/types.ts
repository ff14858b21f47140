// The OrderStorage interface: what the plugin needs from a database, as three small capabilities.
import type { OrderCreatedEvent, OrderEvent, OrderStatusChangedEvent } from '../events.js'
import type { OrderPosition } from '../position.js'
import type { NewOrder, Order } from '../schemas.js'

/** The `created` event of an order the storage has not numbered yet: it stores the event with the numbered order. */
export type NewOrderCreatedEvent = Omit<OrderCreatedEvent, 'order'> & { order: NewOrder }

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
  /** The order was stored (and the claim with it, when one was given), with the number the storage chose. */
  | { created: true, order: Order }
  /** The customer has another order with this `reference`: nothing was stored, not even the claim. */
  | { created: false, referenceTaken: true }
  /** The key was already claimed by a live claim: nothing was stored; here is the order it created. */
  | { created: false, order: Order, fingerprint: string }
  /** The key is claimed but its order cannot be read yet (for adapters that cannot tell). */
  | { created: false, inProgress: true }

/** One keyset page request. Filters combine with AND; an absent filter does not restrict. */
export interface StorageListQuery {
  customerId?: string
  /** The order with this number. */
  number?: number
  /** Orders with this reference (one per customer at most). */
  reference?: string
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
  after?: OrderPosition
  /** How many orders at most. */
  limit: number
}

/** One page of the event feed. */
export interface StorageEventQuery {
  /** Only events after the event with this id in feed order; absent: from the oldest retained event. */
  after?: string
  /** How many events at most. */
  limit: number
}

/** Takes or renews a subscription's lease. */
export interface LeaseRequest {
  /** The subscription's name, shared by every instance that runs it. */
  name: string
  /** Who asks: one random id per subscription runner. */
  holder: string
  /** How long the lease lasts from now, in milliseconds, unless renewed. */
  ttl: number
  /**
   * Where a subscription that does not exist yet starts: `start`, before the oldest retained event;
   * `now`, after every event committed so far (and none of them is ever delivered to it).
   */
  from: 'now' | 'start'
}

export interface Lease {
  /** Whether `holder` now holds the lease. */
  held: boolean
  /** The id of the last event the subscription checkpointed, or null before the first. */
  lastEventId: string | null
}

/**
 * Orders and their idempotency keys. Every change is stored with its event in one atomic step: a
 * create or replace that fails, or that stores nothing (a live claim, a stale version), stores no
 * event either.
 */
export interface OrderStore {
  /**
   * Stores a new order and its `created` event. The storage chooses the order's `number`: a positive
   * integer unique in the storage, larger than that of every order this instance created before; it
   * stores and returns the order, and stores the event, with it. With a claim, stores the claim in the
   * same atomic step, or stores nothing and returns the order of the live claim already stored under
   * `claim.key`. An order whose `reference` its customer has on another order stores nothing
   * (`referenceTaken`), checked after the claim, and by the storage itself so that it holds under
   * concurrent creates.
   */
  create: (order: NewOrder, event: NewOrderCreatedEvent, claim?: IdempotencyClaim) => Promise<CreateResult>
  /** The order with this id, or undefined. */
  get: (id: string) => Promise<Order | undefined>
  /** A page of matching orders in the requested order, at most `limit` long. */
  list: (query: StorageListQuery) => Promise<Order[]>
  /**
   * Compare-and-set: replaces the stored order with the same id by `order`, and stores `event`, only
   * if the stored version is still `expectedVersion`. Returns whether it did.
   */
  replace: (order: Order, expectedVersion: number, event: OrderStatusChangedEvent) => Promise<boolean>
  /** Deletes at most `limit` idempotency keys that expired at or before `now` (ISO). Returns how many. */
  purgeIdempotencyKeys: (now: string, limit: number) => Promise<number>
}

/** The event feed: every stored change's event, in an order that never changes once listed. */
export interface EventFeedStore {
  /**
   * A page of the feed in feed order, or undefined when `after` names no event in it (unknown or
   * purged). Feed order never changes once an event is listed: an event whose change commits later
   * never takes a place before one already listed, so a reader that passes the last id it got never
   * skips one. An event is listed once its change has committed (and, where commits can land out of
   * order, once every change that could come before it has too).
   */
  listEvents: (query: StorageEventQuery) => Promise<OrderEvent[] | undefined>
  /**
   * Deletes at most `limit` events of the oldest unbroken run, in feed order, whose `at` is before
   * `before` (ISO): it stops at the first event it keeps, so a reader never misses an event between
   * two it could still name. It keeps every event that a subscription which held its lease after
   * `before` has not checkpointed yet. Returns how many it deleted.
   */
  purgeEvents: (before: string, limit: number) => Promise<number>
}

/** Subscriptions: a lease per name, and a checkpoint in the feed that only the holder moves. */
export interface SubscriptionStore {
  /**
   * Creates the subscription when absent (where `from` says), then gives `holder` the lease when it is
   * free, lapsed, or already `holder`'s, until `ttl` from now.
   */
  lease: (request: LeaseRequest) => Promise<Lease>
  /** The next events of the subscription after its checkpoint, in feed order, at most `limit`. */
  readSubscription: (name: string, limit: number) => Promise<OrderEvent[]>
  /**
   * Compare-and-set of the checkpoint: moves it to `eventId` only while `holder` is the lease's holder
   * and the checkpoint is still `lastEventId`. Returns whether it did.
   */
  checkpoint: (name: string, holder: string, lastEventId: string | null, eventId: string) => Promise<boolean>
  /** Gives up the lease if `holder` holds it, so another instance may take over at once. */
  release: (name: string, holder: string) => Promise<void>
}

/**
 * Where orders live: the three capabilities an adapter composes. Adapters only store: totals,
 * workflow, limits and scope are the plugin's. Every method may throw (or reject); the plugin turns
 * that into 503 ORDER_STORAGE_UNAVAILABLE. Orders and events passed in and returned are plain JSON
 * values; the plugin never mutates what it gets back.
 */
export interface OrderStorage extends OrderStore, EventFeedStore, SubscriptionStore {
  /** Prepares the store (tables, indexes); the plugin awaits it at register, before serving. */
  init?: () => Promise<void>
  /**
   * For storages that can join a transaction the host opened (`app.orders.withTransaction`): the
   * orders whose statements run on `client`, inside that transaction. Absent where the storage cannot.
   */
  joinTransaction?: (client: unknown) => TransactionOrderStore
}

/** Orders read and written inside a host's transaction: the plugin learns its outcome from `settled`. */
export interface TransactionOrderStore extends Omit<OrderStore, 'purgeIdempotencyKeys'> {
  /**
   * Resolves once the transaction that stored the event `eventId` (through this store) has ended:
   * true when it committed with the event, false when it rolled back (or the event was rolled back
   * to a savepoint). Until then the change is invisible to everyone else. Rejects once `signal` aborts
   * (the app closes) before the transaction ends.
   */
  settled: (eventId: string, signal: AbortSignal) => Promise<boolean>
}

/** The methods of each capability, as the plugin checks them at register and the conformance suite does. */
export const storageMethods = Object.freeze({
  orders: Object.freeze(['create', 'get', 'list', 'replace', 'purgeIdempotencyKeys'] as const),
  feed: Object.freeze(['listEvents', 'purgeEvents'] as const),
  subscriptions: Object.freeze(['lease', 'readSubscription', 'checkpoint', 'release'] as const)
}) satisfies { [capability: string]: ReadonlyArray<keyof OrderStorage> }
