// The names of the tables and indexes one MySQL storage owns, all derived from its `table` option.
import { codes } from '../../errors.js'
import { quote } from './client.js'

// MySQL keeps 64 characters of a name: the longest derived one adds 17 to the table's.
const MAX_TABLE_NAME = 40
const TABLE_NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_]{0,${MAX_TABLE_NAME - 1}}$`)

/** Quoted names of the tables of the storage whose orders table is `table`; index names are bare (each table has its own). */
export interface Tables {
  /** The bare `table` option. */
  name: string
  orders: string
  keys: string
  events: string
  /** One row: the last feed position given, locked by the one sequencer at work. */
  sequencer: string
  subscriptions: string
  /** Events each subscription finished above its checkpoint, by feed position. */
  finished: string
  /** Each subscription's dead letters. */
  deadLetters: string
  /** One row: the layout's version. */
  schema: string
}

/** The indexes of the orders table a page may walk, each named after what it leads with. */
export const orderIndexes = Object.freeze({
  created: 'created_idx',
  customer: 'customer_created_idx',
  status: 'status_created_idx',
  customerStatus: 'customer_status_created_idx',
  number: 'number_idx',
  reference: 'reference_created_idx',
  /** A store's orders of one reference: the store-scoped reference page. */
  storeReferenceCreated: 'store_reference_created_idx',
  /** Unique: a customer's reference, per store ('' for orders without one). */
  storeReference: 'customer_reference_store_idx',
  store: 'store_created_idx',
  storeCustomer: 'store_customer_created_idx',
  storeStatus: 'store_status_created_idx',
  storeCustomerStatus: 'store_customer_status_idx',
  /** The pages of one balance sign, led by the columns a filter fixes, in that order: (balance_sign, created_at, id)... */
  balance: 'balance_created_idx',
  balanceStatus: 'balance_status_created_idx',
  customerBalance: 'customer_balance_created_idx',
  customerBalanceStatus: 'customer_balance_status_idx',
  storeBalance: 'store_balance_created_idx',
  storeBalanceStatus: 'store_balance_status_idx',
  storeCustomerBalance: 'store_customer_balance_idx',
  /** ...to (store, customer_id, balance_sign, status, created_at, id). */
  storeCustomerBalanceStatus: 'store_customer_balance_status_idx'
})

/** The names of a storage's tables; ORDER_INVALID_OPTIONS for a table name that is not one. */
export function tablesOf (table: string): Tables {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new codes.ORDER_INVALID_OPTIONS(`mysqlStorage: table must be 1 to ${MAX_TABLE_NAME} letters, digits or "_", not starting with a digit; got ${JSON.stringify(table)}`)
  }
  return {
    name: table,
    orders: quote(table),
    keys: quote(`${table}_idempotency_keys`),
    events: quote(`${table}_events`),
    sequencer: quote(`${table}_sequencer`),
    subscriptions: quote(`${table}_subscriptions`),
    finished: quote(`${table}_finished`),
    deadLetters: quote(`${table}_dead_letters`),
    schema: quote(`${table}_schema`)
  }
}
