// The MySQL storage's layout on start: refuse a newer one, create or upgrade an older one step by step under GET_LOCK.
import { codes } from '../../errors.js'
import { sessionOf, type MysqlClient, type Session } from './client.js'
import { REPEAT, SCHEMA_VERSION, schemaSteps } from './layout/steps.js'
import { signBackfill } from './layout/version-2.js'
import { tablesOf, type Tables } from './tables.js'

/** How long an instance waits for another's upgrade to finish, in seconds, before it fails. */
const UPGRADE_WAIT = 600

const bare = (quoted: string) => quoted.slice(1, -1)

// What a step's ALTER TABLE answers when an upgrade that failed later had already run it: a duplicate
// column (1060) or index name (1061). Neither MySQL 8 nor MariaDB cut one ALTER TABLE short.
const ALREADY_DONE = new Set([1060, 1061])

/** Runs one statement of a step: a backfill in batches, each its own short statement, until nothing is left. */
async function runStatement ({ write }: Session, statement: string): Promise<void> {
  try {
    let changed = (await write(statement)).affectedRows
    while (statement.startsWith(REPEAT) && changed > 0) changed = (await write(statement)).affectedRows
  } catch (err) {
    if (!ALREADY_DONE.has((err as { errno?: number }).errno!)) throw err
  }
}

/**
 * The name of the upgrade lock of the storage whose table is `?`, in this database: hashed, as MySQL
 * takes names of at most 64 characters.
 */
export const UPGRADE_LOCK = 'CONCAT(\'fastify-order:\', LEFT(SHA2(CONCAT(DATABASE(), \'.\', ?), 256), 40))'

/** The version of the layout in the database: 0 when there is none. */
async function versionOf ({ run }: Session, { schema, orders, name }: Tables): Promise<number> {
  const found = await run<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = DATABASE() AND table_name IN (?, ?)`, [bare(schema), bare(orders)])
  if (!found.some(row => row.name === bare(schema))) {
    if (found.length === 0) return 0
    throw new codes.ORDER_INVALID_OPTIONS(`mysqlStorage table "${name}": a table "${name}" exists but is not the orders table of a storage; ` +
      'another storage or table uses its names, so choose another table option')
  }
  const [row] = await run<{ version: number }>(`SELECT version FROM ${schema} WHERE id = 1`)
  // A version table without its row is a first step cut short.
  return row?.version ?? 0
}

/**
 * Applies every step after the database's version, in order, each once, holding the named lock
 * of `<database>.<table>` (GET_LOCK, released in `finally`, even when a step fails; the
 * server releases it too should the connection die). Instances starting together wait for one
 * another and find the work done.
 */
export async function upgradeSchema (client: MysqlClient, tables: Tables, wait = UPGRADE_WAIT): Promise<void> {
  const connection = await client.getConnection()
  const session = sessionOf(connection)
  try {
    const [{ locked }] = await session.run<{ locked: number | string | null }>(
      `SELECT GET_LOCK(${UPGRADE_LOCK}, ?) AS locked`, [tables.name, wait]) as [{ locked: number | null }]
    if (Number(locked) !== 1) throw new codes.ORDER_INVALID_OPTIONS(`mysqlStorage table "${tables.name}": another instance held the upgrade lock for ${wait} s`)
    try {
      const from = await versionOf(session, tables)
      if (from > SCHEMA_VERSION) throw new codes.ORDER_SCHEMA_NEWER(from, SCHEMA_VERSION)
      for (const step of schemaSteps(tables).filter(step => step.version > from)) {
        for (const statement of step.statements) await runStatement(session, statement)
        await session.write(`INSERT INTO ${tables.schema} (id, version) VALUES (1, ?) ON DUPLICATE KEY UPDATE version = VALUES(version)`, [step.version])
      }
    } finally {
      await session.run(`SELECT RELEASE_LOCK(${UPGRADE_LOCK})`, [tables.name])
    }
  } finally {
    connection.release!()
  }
}

/**
 * Before the plugin serves: refuses a layout newer than this release's with ORDER_SCHEMA_NEWER,
 * before any write; creates or upgrades an older one. With the layout up to date it runs no DDL, so
 * an app user that only reads and writes rows starts.
 */
export async function initSchema (client: MysqlClient, tables: Tables): Promise<void> {
  const version = await versionOf(sessionOf(client), tables)
  if (version > SCHEMA_VERSION) throw new codes.ORDER_SCHEMA_NEWER(version, SCHEMA_VERSION)
  if (version < SCHEMA_VERSION) await upgradeSchema(client, tables)
  // Orders an instance of an earlier release stored after the upgrade signed the others: rows only, no DDL.
  await runStatement(sessionOf(client), signBackfill(tables))
}

export interface MysqlSchemaOptions {
  /** The storage's `table` option. Default: `fastify_orders`. */
  table?: string
  /** The layout version the database has; the steps after it are given. Default: 0, a new database. */
  from?: number
}

/**
 * The SQL of every layout step after `from`, for a DBA to run with the mysql client or a migration
 * tool, one statement at a time; each is safe to run again, and each step ends by recording its version.
 */
export function mysqlSchemaSql ({ table = 'fastify_orders', from = 0 }: MysqlSchemaOptions = {}): Array<{ version: number, summary: string, statements: string[] }> {
  const tables = tablesOf(table)
  return schemaSteps(tables).filter(step => step.version > from).map(step => ({
    ...step,
    statements: [...step.statements, `INSERT INTO ${tables.schema} (id, version) VALUES (1, ${step.version}) ON DUPLICATE KEY UPDATE version = VALUES(version)`]
  }))
}
