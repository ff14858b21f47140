// postgresStorage(): orders in PostgreSQL through pg.Pool, pg.Client or PGlite; atomic by single statements.
import { codes } from '../../errors.js'
import { optionChecker } from '../../option-checks.js'
import { MAX_INT32 } from '../../limits.js'
import type { OrderStorage, ReplicaReads } from '../order-storage.js'
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
import { replicaName, replicaReads } from './replicas.js'
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
  /**
   * Hot standbys of `client`'s database, each a `pg.Pool` that reaches exactly one server: pages may
   * be read from them, each caller reading its own writes; everything else stays on `client`. None by
   * default.
   */
  replicas?: PostgresClient[]
  /** How far behind the primary (ms) a replica may be and still serve pages. Default: 5 000. */
  maxReplicaLag?: number
}

/** The storage postgresStorage makes: every capability, and pages from replicas when it has some. */
export type PostgresStorage = Required<Omit<OrderStorage, 'replicas'>> & { replicas?: ReplicaReads }

const check = optionChecker('postgresStorage: ', codes.ORDER_INVALID_OPTIONS)

/**
 * PostgreSQL storage. `init()` creates the tables and indexes, or upgrades those of an earlier release
 * (the plugin calls it at register).
 * Every operation is one statement, so several app instances can share a database: creates with an
 * idempotency key claim it and store the order atomically, replaces are compare-and-set on `version`,
 * and every list page is read from an index. `app.orders.withTransaction(client)` runs the same
 * statements on a client inside the host's own transaction.
 */
export function postgresStorage (options: PostgresStorageOptions): PostgresStorage {
  const mistake = clientMistake('postgresStorage', options)
  if (mistake !== undefined) throw check.invalid(mistake)
  const record = check.known(options, ['client', 'table', 'prepare', 'replicas', 'maxReplicaLag'], '{ client: pool }')
  const { client, table = 'fastify_orders' } = options
  if (typeof client?.query !== 'function') throw check.invalid('client must be a pg.Pool, a pg.Client or a PGlite, with query(text, params)')
  const prepare = check.oneOf(record, 'prepare', [true, false], takesNamedStatements(client))
  const tables = tablesOf(table)
  const { query, run } = runnerOf(client, prepare)
  const outcomes = transactionOutcomes(tables, query)
  const replicas = replicasOf(record, client, query, tables)
  const storage: PostgresStorage = {
    init: async () => {
      await initSchema(client, query, tables)
      await replicas?.start()
    },
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
  if (replicas !== undefined) storage.replicas = replicas
  return storage
}

/** The replicas option read: undefined without replicas. */
function replicasOf (record: Record<string, unknown>, client: PostgresClient, query: ReturnType<typeof runnerOf>['query'], tables: ReturnType<typeof tablesOf>) {
  const maxReplicaLag = check.integer(record, 'maxReplicaLag', { fallback: 5000, min: 0, max: MAX_INT32, unit: ' ms' })
  const given = record.replicas
  if (given === undefined) return undefined
  if (!Array.isArray(given)) throw check.invalid('replicas must be an array of pg.Pool, one per hot standby of the primary client')
  const seen = new Set<unknown>([client])
  const replicas = given.map((replica: PostgresClient, index) => {
    if (typeof replica?.query !== 'function') throw check.invalid(`replicas[${index}] must be a pg.Pool on a hot standby, with query(text, params)`)
    if (seen.has(replica)) throw check.invalid(`replicas[${index}] is ${replica === client ? 'the primary client' : 'given twice'}; each replica is a pool of its own on one standby`)
    seen.add(replica)
    return { name: replicaName(replica) ?? `replica ${index + 1}`, run: runnerOf(replica, false).query }
  })
  const names = replicas.map(({ name }) => name)
  const twice = names.find((name, index) => names.indexOf(name) !== index && !name.startsWith('replica '))
  if (twice !== undefined) throw check.invalid(`two replicas reach ${twice}; each replica is a pool on one standby of its own`)
  return replicaReads({ primary: query, replicas, maxReplicaLag, page: (run, listQuery) => listOrders(tables, run)(listQuery) })
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
