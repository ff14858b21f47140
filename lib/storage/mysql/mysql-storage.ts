// mysqlStorage(): orders in MySQL 8.0+ or MariaDB 10.6+ through a mysql2/promise pool; atomic by transactions, with a gap-free feed.
import { codes } from '../../errors.js'
import { optionChecker } from '../../option-checks.js'
import type { OrderStorage } from '../order-storage.js'
import { clientMistake } from '../storage-mistakes.js'
import { inTransaction, isPool, sessionOf, type MysqlClient } from './client.js'
import { joinTransaction, settledOf } from './join-transaction.js'
import { checkpoint } from './sql/checkpoint.js'
import { readChangeClaim } from './sql/claim-change.js'
import { createOrder, type Transaction } from './sql/create-order.js'
import { getOrder } from './sql/get-order.js'
import { inspectSubscription } from './sql/inspect-subscription.js'
import { lease } from './sql/lease.js'
import { listDeadLetters } from './sql/list-dead-letters.js'
import { listEvents } from './sql/list-events.js'
import { listOrders } from './sql/list-orders.js'
import { purgeEvents } from './sql/purge-events.js'
import { purgeIdempotencyKeys } from './sql/purge-idempotency-keys.js'
import { readRedeliveries } from './sql/read-redeliveries.js'
import { readSubscription } from './sql/read-subscription.js'
import { recordOutcomes } from './sql/record-outcomes.js'
import { redeliver } from './sql/redeliver.js'
import { release } from './sql/release.js'
import { replaceOrder } from './sql/replace-order.js'
import { checkSession, watchedPool } from './session-settings.js'
import { sequenceEvents } from './sql/sequence-events.js'
import { tablesOf } from './tables.js'
import { initSchema, upgradeSchema } from './upgrade.js'

export type { MysqlClient }
export { mysqlSchemaSql, type MysqlSchemaOptions } from './upgrade.js'
export { SCHEMA_VERSION as MYSQL_SCHEMA_VERSION, type SchemaStep } from './layout/steps.js'

export interface MysqlStorageOptions {
  /**
   * A `mysql2/promise` pool (`mysql.createPool(…)` from `mysql2/promise`, or `pool.promise()`):
   * single statements run on it, and each transaction on a connection it lends.
   */
  client: MysqlClient
  /**
   * Name of the orders table; the other tables are named after it (`<table>_idempotency_keys`,
   * `<table>_events`, `<table>_sequencer`, `<table>_subscriptions`, `<table>_finished`,
   * `<table>_dead_letters`, `<table>_schema`), so two plugins can share one database under two names.
   * Letters, digits and `_`, at most 40 characters. Default: `fastify_orders`.
   */
  table?: string
}

const check = optionChecker('mysqlStorage: ', codes.ORDER_INVALID_OPTIONS)

/**
 * MySQL or MariaDB storage. `init()` creates the tables, or upgrades those of an earlier release (the
 * plugin calls it at register). Every change is one short transaction of its own, retried when InnoDB
 * gives it up for a lost race, so several app instances can share a database; every page is one walk
 * of an index; the feed gets positions after commit (sql/sequence-events.ts), so it never skips.
 * `app.orders.withTransaction(connection)` runs the same statements in the host's own transaction.
 */
export function mysqlStorage (options: MysqlStorageOptions): Required<Omit<OrderStorage, 'feedHealth' | 'replicas'>> {
  const mistake = clientMistake('mysqlStorage', options)
  if (mistake !== undefined) throw check.invalid(mistake)
  check.known(options, ['client', 'table'], '{ client: pool }')
  if (!isPool(options.client)) throw check.invalid('client must be a mysql2/promise pool: mysql.createPool(…) from \'mysql2/promise\', or pool.promise() of a mysql2 pool')
  const { table = 'fastify_orders' } = options
  const client = watchedPool(options.client)
  const tables = tablesOf(table)
  const session = sessionOf(client)
  const transaction: Transaction = work => inTransaction(client, work)
  const sequence = sequenceEvents(tables, client)
  const settled = settledOf(tables, client)
  return {
    async init () {
      await checkSession(client)
      await initSchema(client, tables)
    },
    create: createOrder(tables, transaction),
    get: getOrder(tables, session),
    list: listOrders(tables, session),
    replace: replaceOrder(tables, transaction),
    purgeIdempotencyKeys: purgeIdempotencyKeys(tables, session),
    listEvents: listEvents(tables, session, sequence),
    purgeEvents: purgeEvents(tables, session),
    lease: lease(tables, session, sequence),
    readSubscription: readSubscription(tables, session, sequence),
    checkpoint: checkpoint(tables, session),
    release: release(tables, session),
    recordOutcomes: recordOutcomes(tables, transaction),
    readRedeliveries: readRedeliveries(tables, session),
    listDeadLetters: listDeadLetters(tables, session),
    redeliver: redeliver(tables, session),
    inspectSubscription: inspectSubscription(tables, session, sequence),
    joinTransaction: connection => joinTransaction(tables, settled, connection),
    readChangeClaim: readChangeClaim(tables, session)
  }
}

/**
 * Brings the storage's tables to this release's layout, as `init()` does when the plugin starts: for a
 * deploy step run by a user that may change the schema, so that the app itself may run as one that
 * only reads and writes rows. See `mysqlSchemaSql` for the SQL itself.
 */
export async function upgradeMysqlSchema ({ client, table = 'fastify_orders' }: { client: MysqlClient, table?: string }): Promise<void> {
  await upgradeSchema(client, tablesOf(table))
}
