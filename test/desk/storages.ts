// The storages the desk's browser tests run on beside memory: PGlite, the PostgreSQL server (DATABASE_URL) and MariaDB or MySQL (MYSQL_URL), each as two storages on one set of tables.
import type { Test } from 'tap'
import type { OrderStorage } from '../../lib/index.js'
import { postgresStorage } from '../../lib/storage/postgres/postgres-storage.js'
import { testDatabase } from '../postgres-helper.js'

/** Two storages on one set of tables, as two app instances would have them. */
export type SharedStorages = (t: Test) => Promise<[OrderStorage, OrderStorage]>

export const storages: Array<[string, SharedStorages | string]> = [
  ['PGlite', async t => {
    const db = await testDatabase(t, '')
    const table = db.freshTable()
    return [postgresStorage({ client: db.client, table }), postgresStorage({ client: db.connect(), table })]
  }],
  ['the PostgreSQL server', process.env.DATABASE_URL
    ? async t => {
      const db = await testDatabase(t, process.env.DATABASE_URL)
      const table = db.freshTable()
      return [postgresStorage({ client: db.client, table }), postgresStorage({ client: db.connect(), table })]
    }
    : 'DATABASE_URL is not set: no PostgreSQL server to test on'],
  ['MariaDB or MySQL', process.env.MYSQL_URL
    ? async t => {
      const [{ testMysql }, { mysqlStorage }] = await Promise.all([import('../mysql-helper.js'), import('../../lib/storage/mysql/mysql-storage.js')])
      const db = testMysql(t)
      const table = db.freshTable()
      return [mysqlStorage({ client: db.client, table }), mysqlStorage({ client: db.connect(), table })]
    }
    : 'MYSQL_URL is not set: no MariaDB or MySQL server to test on']
]
