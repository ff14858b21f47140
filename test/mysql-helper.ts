// Databases for the MySQL tests: pools on the MariaDB or MySQL server of MYSQL_URL, and fresh tables on it.
import { randomBytes } from 'node:crypto'
import mysql, { type Pool, type PoolConnection } from 'mysql2/promise'
import type { Test } from 'tap'
import type { TransactionRunner } from '../lib/storage/conformance/run-conformance.js'
import type { mysqlStorage, MysqlStorageOptions } from '../lib/storage/mysql/mysql-storage.js'

/** The server the MySQL tests run on, or '' when none is set: those tests then say in one line that they skipped. */
export const mysqlUrl = process.env.MYSQL_URL ?? ''

export interface TestMysql {
  /** A pool on the server, as an app would make it. */
  client: Pool
  /** Another pool on the same server, as a second app instance would have. */
  connect: () => Pool
  /** A table name no other test uses; every table whose name starts with it is dropped at teardown. */
  freshTable: () => string
  /** Runs work on a connection inside a transaction a host opened (beginTransaction … commit or rollback): the conformance suite's runner. */
  transaction: TransactionRunner
  /**
   * Runs `work` on a pooled connection inside a transaction that stays open, still running, until
   * `commit` (or `rollback`) is called; the connection goes back to its pool then.
   */
  openTransaction: (work: (connection: PoolConnection) => Promise<void>, pool?: Pool) => Promise<{ commit: () => Promise<void>, rollback: () => Promise<void> }>
  /** A fresh, empty, initialised storage on a table of its own: the factory the conformance suite takes. */
  storage: (options?: Partial<MysqlStorageOptions>) => Promise<ReturnType<typeof mysqlStorage>>
}

/** A LIKE pattern matching every name that starts with `prefix`, its `_` and `%` taken literally. */
function startsWith (prefix: string): string {
  return `${prefix.replace(/[\\_%]/g, '\\$&')}%`
}

/** Drops every table whose name starts with `prefix` (a storage's tables all start with its table name). */
export async function dropTablesStartingWith (client: Pool, prefix: string): Promise<void> {
  const connection = await client.getConnection()
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW TABLES LIKE ?', [startsWith(prefix)])
    const names = rows.map(row => Object.values(row)[0] as string)
    if (names.length === 0) return
    // Tables may refer to each other; dropped together, in any order.
    await connection.query('SET SESSION foreign_key_checks = 0')
    await connection.query(`DROP TABLE IF EXISTS ${names.map(name => `\`${name}\``).join(', ')}`)
    await connection.query('SET SESSION foreign_key_checks = 1')
  } finally {
    connection.release()
  }
}

/** Pools on the server `url` names (default MYSQL_URL), ended when `t` ends, with the tables its tests made dropped. */
export function testMysql (t: Test, url = mysqlUrl): TestMysql {
  if (url === '') throw new Error('testMysql needs MYSQL_URL: a test without it says it skipped instead')
  const pools: Pool[] = []
  // A few connections each: several test files share one server, whose connections are counted.
  const connect = () => {
    const pool = mysql.createPool({ uri: url, connectionLimit: 4 })
    pools.push(pool)
    return pool
  }
  const client = connect()
  // A prefix per file run, so test files running at once on one server never meet.
  const prefix = `fo_${randomBytes(4).toString('hex')}`
  let tables = 0
  t.teardown(async () => {
    await dropTablesStartingWith(client, `${prefix}_`)
    for (const pool of pools) await pool.end()
  })
  const freshTable = () => `${prefix}_${tables++}`

  const transaction: TransactionRunner = async (work, commit) => {
    const connection = await client.getConnection()
    try {
      await connection.beginTransaction()
      try {
        await work(connection)
      } catch (err) {
        await connection.rollback()
        throw err
      }
      await (commit ? connection.commit() : connection.rollback())
    } finally {
      connection.release()
    }
  }

  async function openTransaction (work: (connection: PoolConnection) => Promise<void>, pool = client) {
    const connection = await pool.getConnection()
    await connection.beginTransaction()
    const end = (how: 'commit' | 'rollback') => async () => {
      try {
        await connection[how]()
      } finally {
        connection.release()
      }
    }
    try {
      await work(connection)
    } catch (err) {
      await end('rollback')()
      throw err
    }
    return { commit: end('commit'), rollback: end('rollback') }
  }

  return {
    client,
    connect,
    freshTable,
    transaction,
    openTransaction,
    async storage (options = {}) {
      // Loaded on first use: a file that only needs pools and tables does not load the adapter.
      const { mysqlStorage } = await import('../lib/storage/mysql/mysql-storage.js')
      const storage = mysqlStorage({ client, table: freshTable(), ...options })
      await storage.init!()
      return storage
    }
  }
}
