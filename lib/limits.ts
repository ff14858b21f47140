// Every numeric limit and default of the contract, written once: schemas, option checks and rules read them here.

/** The largest 32-bit signed integer: the longest timer Node.js keeps (ms), and what a PostgreSQL integer holds. */
export const MAX_INT32 = 2 ** 31 - 1

const DAY = 24 * 60 * 60 * 1000

/** The order, as createOrder takes it. */
export const order = Object.freeze({
  /** Characters of a customer id. */
  customerIdLength: 128,
  /** Characters of an order id (the server's ids are 48; a filter may name longer ones, which find nothing). */
  idLength: 128,
  /** Characters of a client's reference. */
  referenceLength: 128,
  /** Characters of a store key. */
  storeLength: 64,
  /** Characters of an actor. */
  actorLength: 128,
  skuLength: 64,
  itemNameLength: 200,
  maxQuantity: 1_000_000,
  /** Minor units (cents) of one item. */
  maxUnitPrice: 1e12,
  metadataKeys: 50,
  metadataKeyLength: 40,
  metadataValueLength: 500,
  /** Characters of a move's reason. */
  reasonLength: 500,
  /** The largest `expectedVersion`. */
  maxVersion: MAX_INT32,
  /** Characters of an Idempotency-Key header. */
  idempotencyKeyLength: 255,
  /** How deep custom-field values may nest: the `customFields` object itself is level 1. */
  customFieldDepth: 32
})

/** Changes after placement (the `changes` option). */
export const change = Object.freeze({
  /** Actions of one change. */
  maxActions: 50,
  /** Characters of a payment's or refund's reference at its provider. */
  paymentReferenceLength: 255,
  /** Entries of an order's `changes` (`changes.maxChanges`): its default, and the most it may be set to. */
  defaultMaxChanges: 100,
  /** Entries of an order's `payments` (`changes.maxPayments`): its default, and the most it may be set to. */
  defaultMaxPayments: 100,
  /** The most either may be set to: an order stays one bounded document. */
  maxLedgerEntries: 10_000
})

/** getOrderList and the event feed. */
export const page = Object.freeze({
  /** `limit` when a query gives none (or `maxPageSize`, when smaller). */
  defaultSize: 20,
  /** Ids one `filter.ids` may name. */
  maxIds: 100,
  /** Characters of a cursor a client may send back. */
  cursorLength: 1024,
  defaultEvents: 100,
  maxEvents: 1000
})

/** The plugin's register options: their defaults and the largest value each may take. */
export const plugin = Object.freeze({
  defaultMaxPageSize: 100,
  defaultMaxItems: 100,
  /** The largest page and order that stay one bounded statement. */
  maxCount: 10_000,
  defaultIdempotencyTtl: DAY,
  defaultEventRetention: 30 * DAY,
  /** The longest duration option: 100 years, so every time computed from it keeps a four-digit year. */
  maxDuration: 100 * 365 * DAY,
  defaultBodyLimit: 1024 * 1024,
  /** A body length a 32-bit length holds. */
  maxBodyLimit: MAX_INT32,
  defaultFeedStallWarning: 60_000
})

/** Subscriptions (`app.orders.subscribe`). */
export const subscription = Object.freeze({
  nameLength: 100,
  defaultPollInterval: 1000,
  defaultLeaseTtl: 30_000,
  defaultMaxBackoff: 60_000,
  /** How long one handler call may stay pending before it is a failed attempt and its signal aborts. */
  defaultTimeout: 30_000,
  /** Every duration option of a subscription: what a timer keeps. */
  maxDuration: MAX_INT32,
  /** Events handled at once. */
  defaultConcurrency: 1,
  maxConcurrency: 256,
  /** Delays of a `retry` schedule, each at most `maxDuration`. */
  maxSchedule: 20,
  /** `app.orders.deadLetters` pages, and the event ids one `redeliver` may name. */
  defaultDeadLetters: 100,
  maxDeadLetters: 1000,
  /** How far `lag.events` counts. */
  maxLag: 10_000,
  /** Characters of a failure's description kept in `failing` and in a dead letter. */
  errorLength: 1000
})

/** Webhooks (`webhook()`). */
export const webhook = Object.freeze({
  defaultTimeout: 10_000,
  maxTimeout: MAX_INT32,
  minSecretBytes: 24,
  maxSecretBytes: 64
})

/** The event stream (`stream` option, `GET /order/events`). */
export const stream = Object.freeze({
  /** Open streams one instance serves; the next is 503 ORDER_STREAM_FULL. */
  defaultMaxClients: 1000,
  maxMaxClients: 100_000,
  /** How often the one feed reader of an instance looks for events other instances wrote, in ms. */
  defaultPollInterval: 500,
  maxPollInterval: 60_000,
  /** A comment line at least this often (ms), so proxies keep an idle stream open; the contract's most. */
  defaultHeartbeat: 15_000,
  /** Seconds a client told 503 ORDER_STREAM_FULL waits (Retry-After). */
  retryAfter: 5,
  /** Events one feed read lists: the feed's largest page. */
  readSize: 1000,
  /** Events the feed reader keeps after reading them, so a stream catching up joins it without a read of its own. */
  history: 2000
})

/** Statuses of a workflow. */
export const workflow = Object.freeze({
  statusLength: 64
})
