// The names of the relations one storage owns, all derived from its `table` option.
import { codes } from '../../errors.js'
import { quote } from './client.js'

// PostgreSQL keeps 63 bytes of a name: the longest derived one adds 31 to the table's.
const MAX_TABLE_NAME = 32
const TABLE_NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${MAX_TABLE_NAME - 1}}$`)

/** Quoted names of the tables and indexes of the storage whose orders table is `table`. */
export interface Tables {
  /** The bare `table` option. */
  name: string
  orders: string
  keys: string
  events: string
  subscriptions: string
  /** Events each subscription finished above its checkpoint, by feed position. */
  finished: string
  /** Each subscription's dead letters. */
  deadLetters: string
  /** One row: the layout's version and the feed's current epoch. */
  schema: string
  /** The function that gives new events the current epoch. */
  epoch: string
  /** The sequence order numbers are drawn from. */
  numbers: string
  indexes: {
    created: string
    customer: string
    status: string
    customerStatus: string
    keysExpiry: string
    /** Release 0.1's feed index, on (tx, seq): replaced by `feed` in version 2. */
    position: string
    feed: string
    /** Unique: an order number names one order. */
    number: string
    /** Version 3's unique (customer_id, reference): replaced by `storeReference` in version 4. */
    reference: string
    /** (reference, created_at, id): orders of one reference across customers, in page order. */
    referenceCreated: string
    /** Unique per customer within a store: (customer_id, reference, coalesce(store, '')). */
    storeReference: string
    /** The orders of a store (partial: orders with one), in page order: (store, created_at, id)... */
    storeCreated: string
    /** ...(store, customer_id, created_at, id)... */
    storeCustomer: string
    /** ...(store, status, created_at, id)... */
    storeStatus: string
    /** ...and (store, customer_id, status, created_at, id). */
    storeCustomerStatus: string
    /** (store, reference, created_at, id), partial on orders with both: a store's orders of one reference, in page order. */
    storeReferenceCreated: string
    /** (name, epoch, tx, seq): a subscription's dead letters in feed order. */
    deadLettersFeed: string
    /**
     * The pages of one balance sign, each led by the columns a filter fixes, in that order: (balance_sign,
     * created_at, id), also how the upgrade finds the orders it has not signed yet...
     */
    balanceCreated: string
    /** ...(balance_sign, status, created_at, id)... */
    balanceStatus: string
    /** ...(customer_id, balance_sign, created_at, id)... */
    customerBalance: string
    /** ...(customer_id, balance_sign, status, created_at, id)... */
    customerBalanceStatus: string
    /** ...and, partial on orders with a store: (store, balance_sign, created_at, id)... */
    storeBalance: string
    /** ...(store, balance_sign, status, created_at, id)... */
    storeBalanceStatus: string
    /** ...(store, customer_id, balance_sign, created_at, id)... */
    storeCustomerBalance: string
    /** ...and (store, customer_id, balance_sign, status, created_at, id). */
    storeCustomerBalanceStatus: string
  }
}

/** The names of a storage's relations; ORDER_INVALID_OPTIONS for a table name that is not one. */
export function tablesOf (table: string): Tables {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage: table must be 1 to ${MAX_TABLE_NAME} letters, digits or "_", not starting with a digit; got ${JSON.stringify(table)}`)
  }
  return {
    name: table,
    orders: quote(table),
    keys: quote(`${table}_idempotency_keys`),
    events: quote(`${table}_events`),
    subscriptions: quote(`${table}_subscriptions`),
    finished: quote(`${table}_finished`),
    deadLetters: quote(`${table}_dead_letters`),
    schema: quote(`${table}_schema`),
    epoch: quote(`${table}_epoch`),
    numbers: quote(`${table}_number_seq`),
    indexes: {
      created: quote(`${table}_created_idx`),
      customer: quote(`${table}_customer_created_idx`),
      status: quote(`${table}_status_created_idx`),
      customerStatus: quote(`${table}_customer_status_created_idx`),
      keysExpiry: quote(`${table}_idempotency_keys_expires_idx`),
      position: quote(`${table}_events_position_idx`),
      feed: quote(`${table}_events_feed_idx`),
      number: quote(`${table}_number_idx`),
      reference: quote(`${table}_customer_reference_idx`),
      referenceCreated: quote(`${table}_reference_created_idx`),
      storeReference: quote(`${table}_customer_reference_store_idx`),
      storeCreated: quote(`${table}_store_created_idx`),
      storeCustomer: quote(`${table}_store_customer_created_idx`),
      storeStatus: quote(`${table}_store_status_created_idx`),
      storeCustomerStatus: quote(`${table}_store_customer_status_idx`),
      storeReferenceCreated: quote(`${table}_store_reference_created_idx`),
      deadLettersFeed: quote(`${table}_dead_letters_feed_idx`),
      balanceCreated: quote(`${table}_balance_created_idx`),
      balanceStatus: quote(`${table}_balance_status_created_idx`),
      customerBalance: quote(`${table}_customer_balance_created_idx`),
      customerBalanceStatus: quote(`${table}_customer_balance_status_idx`),
      storeBalance: quote(`${table}_store_balance_created_idx`),
      storeBalanceStatus: quote(`${table}_store_balance_status_idx`),
      storeCustomerBalance: quote(`${table}_store_customer_balance_idx`),
      storeCustomerBalanceStatus: quote(`${table}_store_customer_bal_status_idx`)
    }
  }
}
