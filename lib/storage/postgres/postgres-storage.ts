// postgresStorage(): orders in PostgreSQL through pg.Pool, pg.Client or PGlite; atomic by single statements.
import { codes } from '../../errors.js'
import { optionChecker } from '../../option-checks.js'
import type { OrderStorage } from '../order-storage.js'
import { clientMistake } from '../storage-mistakes.js'
import { runnerOf, takesNamedStatements, type PostgresClient } from './client.js'
import { feedHealthOf } from './sql/feed-health.js'
import { joinTransaction, transactionOutcomes } from './join-transaction.js'
import { checkpoint } from './sql/checkpoint.js'
import { createOrder } from './sql/create-order.js'
import { getOrder } from './sql/get-order.js'
import { inspectSubscription } from './sql/inspect-subscription.js'
import { lease } from './sql/lease.js'
import { listDeadLetters } from './sql/list-dead-letters.js'
import { listEvents } from './sql/list-events.js'
import { listOrders } from './sql/list-orders.js'
import { purgeEvents } from './sql/purge-events.js'
import { purgeIdempotencyKeys } from './sql/purge-idempotency-keys.js'
import { readChangeClaim } from './sql/read-change-claim.js'
import { readRedeliveries } from './sql/read-redeliveries.js'
import { readSubscription } from './sql/read-subscription.js'
import { recordOutcomes } from './sql/record-outcomes.js'
import { redeliver } from './sql/redeliver.js'
import { release } from './sql/release.js'
import { replaceOrder } from './sql/replace-order.js'
import { tablesOf } from './tables.js'
import { initSchema, upgradeSchema } from './upgrade.js'

export type { PostgresClient }
export { postgresSchemaSql, type PostgresSchemaOptions } from './upgrade.js'
export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION, type SchemaStep } from './layout/steps.js'

export interface PostgresStorageOptions {
  /** Runs every statement. A `pg.Pool` lets several statements run at once; each one is atomic alone. */
  client: PostgresClient
  /**
   * Name of the orders table; the idempotency keys live in `<table>_idempotency_keys`, the event feed in
   * `<table>_events`, subscriptions in `<table>_subscriptions` (with `<table>_finished` and
   * `<table>_dead_letters`), and indexes are named after it, so two
   * plugins can share one database under two names. Letters, digits and `_`, at most 32 characters.
   * Resolved through the connection's `search_path`. Default: `fastify_orders`.
   */
  table?: string
  /**
   * Names the storage's fixed statements, so that each connection parses and plans each of them once
   * rather than on every call. Needs a client whose `query` also takes pg's `{ name, text, values }`.
   * Behind a pooler that loses named statements (PgBouncer before 1.21 in transaction mode), the
   * storage retries the first lost one unnamed and sends every statement unnamed from then on.
   * Statements on a host's transaction client (`withTransaction`) are never named. Default: true
   * for a `pg.Pool` or `pg.Client`, false for any other client (PGlite); `false` turns it off.
   */
  prepare?: boolean
}

const check = optionChecker('postgresStorage: ', codes.ORDER_INVALID_OPTIONS)

/**
 * PostgreSQL storage. `init()` creates the tables and indexes, or upgrades those of an earlier release
 * (the plugin calls it at register).
 * Every operation is one statement, so several app instances can share a database: creates with an
 * idempotency key claim it and store the order atomically, replaces are compare-and-set on `version`,
 * and every list page is read from an index. `app.orders.withTransaction(client)` runs the same
 * statements on a client inside the host's own transaction.
 */
export function postgresStorage (options: PostgresStorageOptions): Required<OrderStorage> {
  const mistake = clientMistake('postgresStorage', options)
  if (mistake !== undefined) throw check.invalid(mistake)
  const record = check.known(options, ['client', 'table', 'prepare'], '{ client: pool }')
  const { client, table = 'fastify_orders' } = options
  if (typeof client?.query !== 'function') throw check.invalid('client must be a pg.Pool, a pg.Client or a PGlite, with query(text, params)')
  const prepare = check.oneOf(record, 'prepare', [true, false], takesNamedStatements(client))
  const tables = tablesOf(table)
  const { query, run } = runnerOf(client, prepare)
  const outcomes = transactionOutcomes(tables, query)
  return {
    init: () => initSchema(client, query, tables),
    create: createOrder(tables, run),
    get: getOrder(tables, run),
    list: listOrders(tables, query),
    replace: replaceOrder(tables, run),
    purgeIdempotencyKeys: purgeIdempotencyKeys(tables, run),
    listEvents: listEvents(tables, run),
    purgeEvents: purgeEvents(tables, run),
    lease: lease(tables, run),
    readSubscription: readSubscription(tables, run),
    checkpoint: checkpoint(tables, run),
    release: release(tables, run),
    recordOutcomes: recordOutcomes(tables, run),
    readRedeliveries: readRedeliveries(tables, run),
    listDeadLetters: listDeadLetters(tables, run),
    redeliver: redeliver(tables, run),
    inspectSubscription: inspectSubscription(tables, run),
    joinTransaction: client => joinTransaction(tables, outcomes, client),
    readChangeClaim: readChangeClaim(tables, run),
    feedHealth: feedHealthOf(tables, query)
  }
}

/**
 * Brings the storage's tables to this release's layout, as `init()` does when the plugin starts:
 * for a deploy step or a migration tool run by a role that may change the schema, so that the app
 * itself may run as one that only reads and writes rows. See `postgresSchemaSql` for the SQL itself.
 */
export async function upgradePostgresSchema ({ client, table = 'fastify_orders' }: { client: PostgresClient, table?: string }): Promise<void> {
  const tables = tablesOf(table)
  await upgradeSchema(client, tables)
}
