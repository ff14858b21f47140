// The OrderStorage interface: what the plugin needs from a database, as small capabilities; only the orders are required.
import type { OrderCreatedEvent, OrderEvent, OrderReplacedEvent } from '../feed/events.js'
import type { FeedHealth } from '../feed/feed-stall.js'
import type { OrderPosition } from '../orders/position.js'
import type { PageFilter } from '../http/schemas.js'
import type { NewOrder, Order } from '../http/schemas.js'

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

/**
 * One keyset page request: the getOrderList filter as `readListQuery` makes it canonical (`status`
 * becomes a sorted list of `statuses`, ids are sorted without repeats, `createdFrom` and `createdTo`
 * are ISO timestamps as stored, UTC with milliseconds: from inclusive, to exclusive). Every other
 * filter is an order property matched by equality. Filters combine with AND; an absent filter does
 * not restrict.
 */
export type StorageListQuery = PageFilter & {
  /**
   * With changes on: orders whose balance (`order.balance`, or `order.total` for an order stored
   * without one) is above 0 (`due`), 0 (`settled`) or below 0 (`owed`).
   */
  balance?: 'due' | 'settled' | 'owed'
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
 * Orders and their idempotency keys: the one capability every storage has. Every change is stored
 * with its event in one atomic step: a create or replace that fails, or that stores nothing (a live
 * claim, a stale version), stores no event either.
 */
export interface OrdersCapability {
  /**
   * Stores a new order and its `created` event, and returns the order as stored. The storage chooses
   * the order's `number`: a positive integer unique in the storage, larger than that of every order
   * this instance created before; the stored order and the stored event's order carry it. `order` and
   * `event` are the plugin's: the storage copies what it keeps and changes neither. With a claim,
   * stores the claim in the same atomic step, or stores nothing and returns the order of the live
   * claim already stored under `claim.key`. An order whose `reference` its customer has on another
   * order stores nothing (`referenceTaken`), checked after the claim, and by the storage itself so
   * that it holds under concurrent creates.
   */
  create: (order: NewOrder, event: NewOrderCreatedEvent, claim?: IdempotencyClaim) => Promise<CreateResult>
  /** The order with this id, or undefined. */
  get: (id: string) => Promise<Order | undefined>
  /** A page of matching orders in the requested order, at most `limit` long. */
  list: (query: StorageListQuery) => Promise<Order[]>
  /**
   * Compare-and-set: replaces the stored order with the same id by `order`, and stores `event` (of the
   * type it has: `statusChanged` for a move, `changed` for a change after placement), only if the
   * stored version is still `expectedVersion`. Returns whether it did. `claim` comes only with a change
   * (the `changes` capability): it is stored in the same atomic step, with `order` as the claim's
   * answer; while a live claim of `claim.key` is stored already, nothing is stored and it returns false.
   */
  replace: (order: Order, expectedVersion: number, event: OrderReplacedEvent, claim?: IdempotencyClaim) => Promise<boolean>
  /** Deletes at most `limit` idempotency keys that expired at or before `now` (ISO). Returns how many. */
  purgeIdempotencyKeys: (now: string, limit: number) => Promise<number>
}

/** The event feed: every stored change's event, in an order that never changes once listed. */
export interface FeedCapability {
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

/** What a lease holder finished since it last recorded: one `recordOutcomes` call. */
export interface DeliveryOutcomes {
  /**
   * Events after the checkpoint that are finished (handled, or set aside as dead letters) while an
   * older one is not: `readSubscription` never lists them again, and a checkpoint that passes them
   * forgets them.
   */
  finished: readonly string[]
  /**
   * Events whose last attempt failed: each stored as a dead letter of the subscription with a copy of
   * the event as the feed holds it, or, for one that is a dead letter already (a redelivery that
   * failed again), updated, and no longer put back for redelivery.
   */
  deadLetters: ReadonlyArray<{ eventId: string, attempts: number, error: string, at: string }>
  /** Dead letters put back by `redeliver` and now handled: removed. */
  delivered: readonly string[]
}

/** An event set aside after its last attempt failed. */
export interface StoredDeadLetter {
  event: OrderEvent
  /** The attempts made, the last one included. */
  attempts: number
  /** What the last attempt failed with. */
  error: string
  /** When it was set aside (ISO). */
  at: string
}

/** A page of a subscription's dead letters. */
export interface DeadLetterQuery {
  /** Only dead letters after this event in feed order: a dead letter, or an event of the feed. */
  after?: string
  limit: number
}

/** How a subscription stands in the storage, seen by every instance. */
export interface SubscriptionState {
  /** Events the feed lists after the checkpoint and not finished, counted up to the limit asked. */
  lagEvents: number
  /** The `at` of the first of them in feed order, or null when there is none. */
  oldestAt: string | null
  /** How many dead letters it has. */
  deadLetters: number
}

/**
 * Subscriptions: a lease per name, a checkpoint in the feed that only the holder moves, the events
 * finished above it, and dead letters. Needs the feed.
 */
export interface SubscriptionsCapability {
  /**
   * Creates the subscription when absent (where `from` says), then gives `holder` the lease when it is
   * free, lapsed, or already `holder`'s, until `ttl` from now.
   */
  lease: (request: LeaseRequest) => Promise<Lease>
  /**
   * The next events of the subscription in feed order, at most `limit`: after `after` (an event this
   * subscription read earlier and has not checkpointed) or, without it, after the checkpoint. Events
   * recorded as finished are left out.
   */
  readSubscription: (name: string, limit: number, after?: string) => Promise<OrderEvent[]>
  /**
   * Compare-and-set of the checkpoint: moves it to `eventId` only while `holder` is the lease's holder
   * and the checkpoint is still `lastEventId`. Returns whether it did.
   */
  checkpoint: (name: string, holder: string, lastEventId: string | null, eventId: string) => Promise<boolean>
  /** Gives up the lease if `holder` holds it, so another instance may take over at once. */
  release: (name: string, holder: string) => Promise<void>
  /** Records `outcomes` in one atomic step, only while `holder` holds the lease. Returns whether it did. */
  recordOutcomes: (name: string, holder: string, outcomes: DeliveryOutcomes) => Promise<boolean>
  /** The events of dead letters put back by `redeliver` and not yet handled, in feed order, at most `limit`. */
  readRedeliveries: (name: string, limit: number) => Promise<OrderEvent[]>
  /**
   * A page of the subscription's dead letters in feed order (the order of their events in the feed,
   * kept after retention purged them), or undefined when `after` is neither one of its dead letters
   * nor an event of the feed. Retention never removes a dead letter.
   */
  listDeadLetters: (name: string, query: DeadLetterQuery) => Promise<StoredDeadLetter[] | undefined>
  /** Puts the dead letters of these events (all of them without ids) back for redelivery; returns how many it found. */
  redeliver: (name: string, eventIds?: readonly string[]) => Promise<number>
  /**
   * How the subscription stands, with its lag counted up to `lagLimit` events; undefined when the
   * storage holds neither its checkpoint (it never took a lease) nor a dead letter of it.
   */
  inspectSubscription: (name: string, lagLimit: number) => Promise<SubscriptionState | undefined>
}

/**
 * Changes after placement (section 17): the idempotency keys of changes, which `replace` stores with a
 * claim, kept apart from creates' keys by the plugin's spelling of the key, purged with them by
 * `purgeIdempotencyKeys`. Lists also take `balance` (the sign of `order.balance`, or of `order.total`
 * for an order without one). Only a host that turns changes on needs it.
 */
export interface ChangesCapability {
  /**
   * The claim of a change's key that is live at `now` (its `expiresAt` after `now`, ISO), with the order
   * as that change left it, or undefined.
   */
  readChangeClaim: (key: string, now: string) => Promise<{ fingerprint: string, order: Order } | undefined>
}

/** What a replica-aware page read asks for: where it may come from. */
export interface ReadView {
  /**
   * Positions the page must include: tokens of `position()` (the caller's own writes, a client's
   * `order-consistency` header, the view of the page before). A token of another database: the primary.
   */
  atLeast: readonly string[]
  /** Read from the primary whatever the replicas have. */
  primary: boolean
}

/** A page and where it was read. */
export interface ViewedPage {
  orders: Order[]
  /** Whether a replica served it. */
  replica: boolean
  /** A token of how far the view that served it had got (at least every token it was asked for). */
  position: string
}

/** How one replica is doing, as `app.orders.replicas()` tells it. */
export interface ReplicaStatus {
  /** `host:port`, as the lag gauge names it. */
  name: string
  /** How far behind the primary it was when last sampled, in ms (0 once it has replayed everything). */
  lagMs: number
  /** Whether it serves pages now. */
  inUse: boolean
  /** Why it does not, when it failed or is not a standby of this primary. */
  error?: string
}

/**
 * Pages served by replicas of the database, each caller reading its own writes (section 19). Tokens
 * are the storage's: opaque to the plugin, which only hands them on, at most 64 visible ASCII
 * characters other than `.`. Only a storage with replicas has it.
 */
export interface ReplicaReads {
  /** A token of a position at or after every write committed before the call. */
  position: () => Promise<string>
  /** Whether `token` is in the form of a token (of this database or another). */
  wellFormed: (token: string) => boolean
  /** A page from a replica that has every position of `view.atLeast`, or else from the primary. */
  list: (query: StorageListQuery, view: ReadView) => Promise<ViewedPage>
  /**
   * Whether every replica has `token` (a token of `position()`): from then on no page comes from a
   * replica without it, so the plugin may forget it.
   */
  settled: (token: string) => boolean
  /** Each replica's state, in the order they were given. */
  health: () => ReplicaStatus[]
  /** Stops sampling the replicas (the plugin calls it when the app closes). */
  close: () => void
}

/** Joining a transaction the host opened, for `app.orders.withTransaction`. */
export interface TransactionsCapability {
  /** The orders whose statements run on `client`, inside the host's transaction. */
  joinTransaction: (client: unknown) => JoinedStorage
}

/** Orders read and written inside a host's transaction: the plugin learns its outcome from `settled`. */
export interface JoinedStorage extends Omit<OrdersCapability, 'purgeIdempotencyKeys'>, Partial<ChangesCapability> {
  /**
   * Resolves once the transaction that stored the event `eventId` (through this store) has ended:
   * true when it committed with the event, false when it rolled back (or the event was rolled back
   * to a savepoint). Until then the change is invisible to everyone else. Rejects once `signal` aborts
   * (the app closes) before the transaction ends.
   */
  settled: (eventId: string, signal: AbortSignal) => Promise<boolean>
}

/**
 * A joined storage's create and reads, each first awaiting `opened`, an adapter's check that the host's
 * transaction is open: outside one, every statement would commit on its own. A move reads the order
 * first, through get, so it is checked too.
 */
export function checkedFirst (opened: () => Promise<void>, { create, get, list }: Pick<JoinedStorage, 'create' | 'get' | 'list'>): Pick<JoinedStorage, 'create' | 'get' | 'list'> {
  return {
    async create (order, event, claim) {
      await opened()
      return create(order, event, claim)
    },
    async get (id) {
      await opened()
      return get(id)
    },
    async list (query) {
      await opened()
      return list(query)
    }
  }
}

/**
 * Where orders live: the capabilities an adapter composes. The orders are required; the feed,
 * subscriptions (which need the feed) and joining a transaction are each there whole or not at all,
 * and what needs one that is missing says so when it is called. Adapters only store: totals,
 * workflow, limits and scope are the plugin's. Every method may throw (or reject); the plugin turns
 * that into 503 ORDER_STORAGE_UNAVAILABLE. Orders and events passed in and returned are plain JSON
 * values; the plugin never mutates what it gets back.
 */
export interface OrderStorage extends OrdersCapability, Partial<FeedCapability>, Partial<SubscriptionsCapability>, Partial<TransactionsCapability>, Partial<ChangesCapability> {
  /** Prepares the store (tables, indexes); the plugin awaits it at register, before serving. */
  init?: () => Promise<void>
  /**
   * For a storage whose feed an open transaction can hold back (it lists events only below the oldest
   * one running): how long that transaction has run, and its process id where the database tells.
   * Absent: nothing holds the feed back.
   */
  feedHealth?: () => Promise<FeedHealth>
  /** Pages from replicas, for a storage that has them. */
  replicas?: ReplicaReads | undefined
}

/** The methods of each capability, as the plugin checks them at register and the conformance suite does. */
export const storageMethods = Object.freeze({
  orders: Object.freeze(['create', 'get', 'list', 'replace', 'purgeIdempotencyKeys'] as const),
  feed: Object.freeze(['listEvents', 'purgeEvents'] as const),
  subscriptions: Object.freeze([
    'lease', 'readSubscription', 'checkpoint', 'release', 'recordOutcomes', 'readRedeliveries', 'listDeadLetters', 'redeliver', 'inspectSubscription'
  ] as const),
  transactions: Object.freeze(['joinTransaction'] as const),
  changes: Object.freeze(['readChangeClaim'] as const)
}) satisfies { [capability: string]: ReadonlyArray<keyof OrderStorage> }

export type Capability = keyof typeof storageMethods

/** A storage that has `capability`. */
export type StorageWith<C extends Capability> = OrderStorage & Required<Pick<OrderStorage, (typeof storageMethods)[C][number]>>

/** Whether `storage` has every method of `capability`. */
export function hasCapability<C extends Capability> (storage: OrderStorage, capability: C): storage is StorageWith<C> {
  return storageMethods[capability].every(method => typeof storage[method] === 'function')
}

/**
 * Why `storage` cannot serve the plugin, or undefined: the orders' methods are all there, and every
 * other capability is there whole or not at all (subscriptions only with the feed).
 */
export function storageProblem (storage: unknown): string | undefined {
  const record = (typeof storage === 'object' && storage !== null ? storage : {}) as Record<string, unknown>
  for (const [capability, methods] of Object.entries(storageMethods)) {
    const missing = methods.filter(method => typeof record[method] !== 'function')
    if (missing.length === 0 || (capability !== 'orders' && missing.length === methods.length)) continue
    return `storage.${missing[0]} is not a function; ${capability === 'orders' ? 'every storage needs' : 'a storage with any of them needs all of'} ${methods.join(', ')}`
  }
  if (typeof record.lease === 'function' && typeof record.listEvents !== 'function') {
    return 'storage.listEvents is not a function; a storage with subscriptions needs the event feed (listEvents, purgeEvents)'
  }
  for (const optional of ['init', 'feedHealth']) {
    if (record[optional] !== undefined && typeof record[optional] !== 'function') return `storage.${optional} must be a function when given`
  }
  const replicas = record.replicas as Record<string, unknown> | undefined
  const missing = ['position', 'wellFormed', 'list', 'settled', 'health', 'close'].find(method => typeof replicas?.[method] !== 'function')
  if (replicas !== undefined && missing !== undefined) return `storage.replicas.${missing} must be a function when storage.replicas is given`
  return undefined
}
