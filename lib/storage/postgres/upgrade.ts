// The storage's layout on start: refuse a newer one, upgrade an older one step by step under a lock, check every name is ours, start a new epoch after a move.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { codes } from '../../errors.js'
import { runnerOf, type PostgresClient, type Run } from './client.js'
import { REPEAT, SCHEMA_VERSION, schemaSteps } from './layout/steps.js'
import { signBackfill } from './layout/version-7.js'
import { checkRelations, invalidIndexes, rebuildInvalidIndexes, relationsOf } from './relations.js'
import { tablesOf, type Tables } from './tables.js'

/** How often an instance waiting for another's upgrade looks again. */
const UPGRADE_POLL = 100

/** The version of the layout in the database: 0 when there is none, 1 for release 0.1's (no version table). */
async function versionOf (query: Run, { orders, schema }: Tables): Promise<number> {
  const [found] = await query<{ schema: boolean, orders: boolean }>(
    `SELECT to_regclass('${schema}') IS NOT NULL AS schema, to_regclass('${orders}') IS NOT NULL AS orders`, [])
  if (!found!.schema) return found!.orders ? 1 : 0
  const [row] = await query<{ version: number }>(`SELECT version FROM ${schema}`, [])
  // A version table without its row is a step 2 cut short: the row is its second statement.
  return row?.version ?? 1
}

/** Runs `steps` holding the upgrade lock and resolves true, or resolves false at once while another instance holds it. */
type WithLock = (steps: () => Promise<void>) => Promise<boolean>

/** A pg.Pool: it counts its connections and lends one with connect(). */
interface Pool extends PostgresClient {
  connect: () => Promise<PostgresClient & { release: (err?: Error) => void }>
  totalCount: number
  options?: { max?: number }
}

/** A session lock taken and released on one session: a pg.Client, PGlite, a pool's one connection. */
function sessionLock (query: Run, lock: bigint): WithLock {
  return async steps => {
    const [{ locked }] = await query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${lock}) AS locked`, []) as [{ locked: boolean }]
    if (!locked) return false
    try {
      await steps()
    } finally {
      await query(`SELECT pg_advisory_unlock(${lock})`, [])
    }
    return true
  }
}

/**
 * The lock held by a transaction that a connection of its own keeps open while another connection
 * runs the steps: a transaction-mode pooler (PgBouncer) keeps a transaction on one server connection,
 * where it may send a session's next statement to another one, so a session lock could outlive its
 * unlock there. The transaction is READ COMMITTED and writes nothing, so while it waits it has neither
 * a transaction id nor a snapshot, which are what a CONCURRENTLY index build waits for.
 */
function transactionLock (pool: Pool, lock: bigint): WithLock {
  return async steps => {
    const holder = await pool.connect()
    const { query } = runnerOf(holder, false)
    try {
      await query('BEGIN ISOLATION LEVEL READ COMMITTED', [])
      // Idle for as long as the steps take: a session's idle timeout must not end it, and the lock with it.
      await query('SET LOCAL idle_in_transaction_session_timeout = 0', [])
      const [{ locked }] = await query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(${lock}) AS locked`, []) as [{ locked: boolean }]
      if (locked) await steps()
      await query('ROLLBACK', [])
      holder.release()
      return locked
    } catch (err) {
      // Closed, not given back, as it may still be in the transaction: its server connection ends, and the lock with it.
      holder.release(err as Error)
      throw err
    }
  }
}

/**
 * Runs `work` on one session of `client` and a way to take the upgrade lock. With a pg.Pool, a
 * connection of its own (a CONCURRENTLY index build runs outside any transaction) and the lock held
 * by a transaction on another; on one session (pg.Client, PGlite, a pool of one connection), that
 * session and a session lock.
 */
async function withSession<T> (client: PostgresClient, lock: bigint, work: (query: Run, withLock: WithLock) => Promise<T>): Promise<T> {
  const pool = client as Partial<Pool>
  if (typeof pool.connect !== 'function' || typeof pool.totalCount !== 'number') {
    const { query } = runnerOf(client, false)
    return work(query, sessionLock(query, lock))
  }
  const session = await pool.connect()
  try {
    const { query } = runnerOf(session, false)
    return await work(query, Number(pool.options?.max) < 2 ? sessionLock(query, lock) : transactionLock(pool as Pool, lock))
  } finally {
    session.release()
  }
}

/**
 * Applies every step after the database's version, in order, each once. Instances starting together
 * take turns through an advisory lock: one upgrades, the others wait for it and find the work done.
 * Waiting is a retried try-lock, never a blocked statement, because a CONCURRENTLY index build waits
 * for every transaction older than it, a blocked lock request included.
 */
export async function upgradeSchema (client: PostgresClient, tables: Tables): Promise<void> {
  // Instances in one process may share one session (PGlite, a pg.Client), where an advisory lock is
  // held again by whoever asks: they take turns here first.
  const previous = upgrading.get(tables.name) ?? Promise.resolve()
  const current = Promise.allSettled([previous]).then(() => upgradeLocked(client, tables))
  upgrading.set(tables.name, current)
  try {
    await current
  } finally {
    if (upgrading.get(tables.name) === current) upgrading.delete(tables.name)
  }
}

/** The upgrades under way in this process, by table name. */
const upgrading = new Map<string, Promise<void>>()

async function upgradeLocked (client: PostgresClient, tables: Tables): Promise<void> {
  const lock = createHash('sha256').update(`fastify-order:${tables.name}`).digest().readBigInt64BE(0)
  await withSession(client, lock, async (query, withLock) => {
    for (;;) {
      const version = await versionOf(query, tables)
      if (version > SCHEMA_VERSION) throw new codes.ORDER_SCHEMA_NEWER(version, SCHEMA_VERSION)
      if (version === SCHEMA_VERSION && (await invalidIndexes(query, tables)).length === 0) return
      const upgraded = await withLock(async () => {
        // Read again under the lock: another instance may have finished meanwhile. Checked here, where
        // no other instance is halfway through creating the tables, which would look like a foreign layout.
        const from = await versionOf(query, tables)
        if (from === 0) await checkNamesFree(query, tables)
        if (from === 1) await checkReleaseOne(query, tables)
        for (const step of schemaSteps(tables).filter(step => step.version > from)) {
          for (const statement of step.statements) await runStatement(query, statement)
          // An index build cancelled before (IF NOT EXISTS then skips it) is built again before the step counts as done.
          await rebuildInvalidIndexes(query, tables)
          if (step.version > 1) await query(`UPDATE ${tables.schema} SET version = $1::int`, [step.version])
        }
        await rebuildInvalidIndexes(query, tables)
      })
      if (!upgraded) await sleep(UPGRADE_POLL)
    }
  })
}

/** Runs one statement of a step: a backfill in batches, each its own short transaction, until nothing is left. */
async function runStatement (query: Run, statement: string): Promise<void> {
  let rows = await query(statement, [])
  while (statement.startsWith(REPEAT) && rows.length > 0) rows = await query(statement, [])
}

/**
 * Starts a new feed epoch when the database holds positions its cluster cannot have issued: a
 * transaction id at or past the next one to be assigned. That is what a pg_dump/pg_restore or a
 * logical-replication move into a younger cluster leaves. Every restored event then sorts before
 * every new one, and restored checkpoints keep their place. Rows only, no DDL; two instances doing
 * it at once start two epochs, which orders the same.
 */
async function startEpochAfterMove (query: Run, { events, subscriptions, schema }: Tables): Promise<void> {
  await query(`UPDATE ${schema} SET epoch = epoch + 1
    WHERE EXISTS (SELECT 1 FROM ${events} WHERE epoch = ${schema}.epoch AND tx >= pg_snapshot_xmax(pg_current_snapshot()))
       OR EXISTS (SELECT 1 FROM ${subscriptions} WHERE epoch = ${schema}.epoch AND tx >= pg_snapshot_xmax(pg_current_snapshot()))`, [])
}

/**
 * Moves the number sequence past every stored number when it lags behind them: logical replication
 * copies rows but not sequences, so on the new server it would start again at 1 and every create
 * would hit a taken number. Reads the sequence's state (USAGE is enough) and sets it only when it
 * lags, which needs UPDATE on it, once.
 */
async function catchUpNumbers (query: Run, { orders, numbers }: Tables): Promise<void> {
  await query(`SELECT setval('${numbers}', top) FROM (SELECT max(number) AS top FROM ${orders}) AS stored
    WHERE top > coalesce(pg_sequence_last_value('${numbers}'), 0)`, [])
}

/**
 * Before the plugin serves: refuses a layout newer than this release's with ORDER_SCHEMA_NEWER,
 * before any write; upgrades an older one, and rebuilds an index an interrupted build left invalid;
 * checks every name; starts a new epoch after a move. With the layout up to date and its indexes
 * valid it runs no DDL, so an app role that only reads and writes rows starts.
 */
export async function initSchema (client: PostgresClient, query: Run, tables: Tables): Promise<void> {
  const version = await versionOf(query, tables)
  if (version > SCHEMA_VERSION) throw new codes.ORDER_SCHEMA_NEWER(version, SCHEMA_VERSION)
  if (version < SCHEMA_VERSION || (await invalidIndexes(query, tables)).length > 0) await upgradeSchema(client, tables)
  await checkRelations(query, tables)
  await startEpochAfterMove(query, tables)
  await catchUpNumbers(query, tables)
  // Orders an instance of an earlier release stored after the upgrade signed the others: rows only, no DDL.
  await runStatement(query, signBackfill(tables))
}

/** A table without a version table is release 0.1's orders only if its other tables are there too. */
async function checkReleaseOne (query: Run, { name, orders, keys, events, subscriptions }: Tables): Promise<void> {
  const [row] = await query<{ ours: boolean }>(`SELECT to_regclass('${keys}') IS NOT NULL AND to_regclass('${events}') IS NOT NULL
      AND to_regclass('${subscriptions}') IS NOT NULL
      AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${orders}') AND attname = 'document') AS ours`, [])
  if (!row!.ours) {
    throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage table "${name}": a table "${name}" exists but is not the orders table of a storage; ` +
      'another storage or table uses its names, so choose another table option')
  }
}

/** A new storage needs every one of its names free. */
async function checkNamesFree (query: Run, tables: Tables): Promise<void> {
  const names = relationsOf(tables).map(([name]) => name)
  const [taken] = await query<{ name: string }>('SELECT name FROM unnest($1::text[]) AS n (name) WHERE to_regclass(quote_ident(name)) IS NOT NULL LIMIT 1', [names])
  if (taken !== undefined) {
    throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage table "${tables.name}": "${taken.name}" already exists, and the storage's tables are not there; ` +
      'another storage or table uses its names, so choose another table option')
  }
}

export interface PostgresSchemaOptions {
  /** The storage's `table` option. Default: `fastify_orders`. */
  table?: string
}

/**
 * The SQL of every upgrade step after `from` (default: none, i.e. a new database), for a DBA to run
 * with psql or a migration tool, one statement at a time and outside a transaction (indexes are built
 * CONCURRENTLY). Each statement is safe to run again; each step ends by recording its version.
 */
export function postgresSchemaSql ({ table = 'fastify_orders', from = 0 }: PostgresSchemaOptions & { from?: number } = {}): Array<{ version: number, summary: string, statements: string[] }> {
  const tables = tablesOf(table)
  return schemaSteps(tables).filter(step => step.version > from).map(step => ({
    ...step,
    statements: step.version > 1 ? [...step.statements, `UPDATE ${tables.schema} SET version = ${step.version}`] : step.statements
  }))
}
