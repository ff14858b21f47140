// The MySQL storage's layout: created at init, its version recorded, upgrades under GET_LOCK, a newer one refused before any write, the SQL given to DBAs.
import mysql from 'mysql2/promise'
import t from 'tap'
import { MYSQL_SCHEMA_VERSION, mysqlSchemaSql, mysqlStorage, upgradeMysqlSchema } from '../../../lib/storage/mysql/mysql-storage.js'
import { signBackfill } from '../../../lib/storage/mysql/layout/version-2.js'
import { tablesOf } from '../../../lib/storage/mysql/tables.js'
import { UPGRADE_LOCK, upgradeSchema } from '../../../lib/storage/mysql/upgrade.js'
import { FAR_FUTURE, orderOf, storeOrder } from '../../../lib/storage/conformance/fixtures.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'
import { changed } from '../change-storage.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  const tablesLike = async (table: string) => ((await db.client.query<mysql.RowDataPacket[]>('SHOW TABLES LIKE ?', [`${table}%`]))[0]).map(row => Object.values(row)[0] as string).sort()
  const versionOf = async (table: string) => ((await db.client.query<mysql.RowDataPacket[]>(`SELECT version FROM \`${table}_schema\``))[0])[0]!.version

  t.test('init creates every table, all named after the table option, and records the layout version', async t => {
    const table = db.freshTable()
    await mysqlStorage({ client: db.client, table }).init()
    t.same(await tablesLike(table), ['', '_dead_letters', '_events', '_finished', '_idempotency_keys', '_schema', '_sequencer', '_subscriptions'].map(suffix => `${table}${suffix}`))
    t.equal(await versionOf(table), MYSQL_SCHEMA_VERSION)
    // A second init finds it current and changes nothing.
    const storage = mysqlStorage({ client: db.client, table })
    await storage.init()
    t.equal((await storeOrder(storage, orderOf())).created, true)
  })

  t.test('a layout newer than this release\'s is refused with ORDER_SCHEMA_NEWER, naming both versions, before any write', async t => {
    const table = db.freshTable()
    await mysqlStorage({ client: db.client, table }).init()
    await db.client.query(`UPDATE \`${table}_schema\` SET version = ?`, [MYSQL_SCHEMA_VERSION + 1])
    await db.client.query(`DROP TABLE \`${table}_sequencer\``)
    await t.rejects(mysqlStorage({ client: db.client, table }).init(), { code: 'ORDER_SCHEMA_NEWER', message: new RegExp(`layout version ${MYSQL_SCHEMA_VERSION + 1}, newer than version ${MYSQL_SCHEMA_VERSION}`) })
    await t.rejects(upgradeMysqlSchema({ client: db.client, table }), { code: 'ORDER_SCHEMA_NEWER' })
    t.notOk((await tablesLike(table)).includes(`${table}_sequencer`), 'nothing was created')
    t.equal(await versionOf(table), MYSQL_SCHEMA_VERSION + 1, 'nor changed')
  })

  t.test('a table of the same name that is not a storage\'s is refused', async t => {
    const table = db.freshTable()
    await db.client.query(`CREATE TABLE \`${table}\` (id INT PRIMARY KEY)`)
    await t.rejects(mysqlStorage({ client: db.client, table }).init(), { code: 'ORDER_INVALID_OPTIONS', message: /exists but is not the orders table of a storage/ })
  })

  const holdLock = async (table: string) => {
    const connection = await db.client.getConnection()
    await connection.query(`SELECT GET_LOCK(${UPGRADE_LOCK}, 0)`, [table])
    return async () => {
      await connection.query(`SELECT RELEASE_LOCK(${UPGRADE_LOCK})`, [table])
      connection.release()
    }
  }
  const lockIsFree = async (table: string) => {
    const [[row]] = await db.client.query<mysql.RowDataPacket[]>(`SELECT IS_FREE_LOCK(${UPGRADE_LOCK}) AS free`, [table])
    return Number(row!.free) === 1
  }

  t.test('upgrades take turns under GET_LOCK: one waits while another holds it, and gives up after its wait', async t => {
    const table = db.freshTable()
    const release = await holdLock(table)
    await t.rejects(upgradeSchema(db.client, tablesOf(table), 0), { code: 'ORDER_INVALID_OPTIONS', message: /another instance held the upgrade lock for 0 s/ })
    let done = false
    const waiting = mysqlStorage({ client: db.client, table }).init().then(() => { done = true })
    await new Promise(resolve => setTimeout(resolve, 200))
    t.equal(done, false, 'init waits for the lock')
    await release()
    await waiting
    t.equal(await versionOf(table), MYSQL_SCHEMA_VERSION)
    // Several instances starting at once: all start, the layout made once.
    const other = db.freshTable()
    await Promise.all([db.client, db.connect(), db.connect()].map(client => mysqlStorage({ client, table: other }).init()))
    t.equal(await versionOf(other), MYSQL_SCHEMA_VERSION)
    t.ok(await lockIsFree(other))
  })

  t.test('a step that fails releases the lock and records no version', async t => {
    const table = db.freshTable()
    // A table in the way whose columns the layout's statements cannot use.
    await db.client.query(`CREATE TABLE \`${table}_sequencer\` (other INT)`)
    await t.rejects(mysqlStorage({ client: db.client, table }).init(), { errno: 1054 } as never)
    t.ok(await lockIsFree(table), 'the lock is released')
    t.same((await db.client.query(`SELECT version FROM \`${table}_schema\``))[0], [], 'no version recorded')
    await db.client.query(`DROP TABLE \`${table}_sequencer\``)
    await upgradeMysqlSchema({ client: db.client, table })
    t.equal(await versionOf(table), MYSQL_SCHEMA_VERSION, 'run again once the way is clear, it completes')
  })

  t.test('the SQL of each step, run by a DBA, makes the layout init then finds current', async t => {
    const table = db.freshTable()
    const steps = mysqlSchemaSql({ table })
    t.same(steps.map(step => step.version), Array.from({ length: MYSQL_SCHEMA_VERSION }, (_, i) => i + 1))
    t.same(mysqlSchemaSql({ table, from: MYSQL_SCHEMA_VERSION }), [])
    t.equal(mysqlSchemaSql()[0]!.statements[1]!.includes('`fastify_orders`'), true, 'the default table')
    for (const step of steps) for (const statement of step.statements) await db.client.query(statement)
    t.equal(await versionOf(table), MYSQL_SCHEMA_VERSION)
    // An app user that may not run DDL starts on it: init runs no statement that changes the layout (it
    // signs the balance of any order an earlier release stored: rows only).
    const statements: string[] = []
    const watched = Object.assign(Object.create(db.client), {
      query: (options: string | { sql: string }, values?: unknown) => { statements.push(typeof options === 'string' ? options : options.sql); return db.client.query(options as never, values as never) },
      execute: (options: string | { sql: string }, values?: unknown) => { statements.push(typeof options === 'string' ? options : options.sql); return db.client.execute(options as never, values as never) }
    })
    await mysqlStorage({ client: watched, table }).init()
    t.ok(statements.length > 0 && statements.every(sql => /^(SELECT|SHOW) /.test(sql) || sql === signBackfill(tablesOf(table))), 'only reads, and signs orders')
  })
  t.test('a database of layout version 1 upgrades to balances in place: orders signed from their total over several batches, balance pages and change claims work', async t => {
    const table = db.freshTable()
    const [step1, step2] = mysqlSchemaSql({ table })
    for (const statement of step1!.statements) await db.client.query(statement)
    t.match(step2, { version: 2, statements: [/^ALTER TABLE `\w+` ADD COLUMN balance_sign TINYINT NULL$/] })
    t.ok(step2!.statements.filter(statement => statement.includes('ADD KEY')).every(statement => statement.endsWith('ALGORITHM=INPLACE, LOCK=NONE')), 'every index built in place, writes going on')
    // 2,500 orders as release 0.2 stores them, every tenth free: more than two batches of the backfill.
    const insertOrders = async (from: number, to: number) => {
      const rows = Array.from({ length: to - from + 1 }, (_, i) => {
        const n = from + i
        const order = orderOf({ id: `ord_${String(n).padStart(5, '0')}`, customerId: `cus_${n % 7}`, total: n % 10 === 0 ? 0 : 2500, createdAt: new Date(Date.parse('2026-01-01T00:00:00.000Z') + n * 1000).toISOString() })
        // Stored as the storage stores it: the number is the column's.
        const { number: _number, ...document } = order
        return [order.id, order.customerId, order.status, '', null, order.createdAt, 1, JSON.stringify(document)]
      })
      await db.client.query(`INSERT INTO \`${table}\` (id, customer_id, status, store, reference, created_at, version, document) VALUES ?`, [rows])
    }
    await insertOrders(1, 2500)
    // An upgrade that stopped after its first statements runs them again without an error.
    for (const statement of step2!.statements.slice(0, 2)) await db.client.query(statement)
    const storage = mysqlStorage({ client: db.client, table })
    await storage.init()
    t.equal(await versionOf(table), 2)
    const signs = async () => ((await db.client.query<mysql.RowDataPacket[]>(`SELECT balance_sign AS sign, COUNT(*) AS orders FROM \`${table}\` GROUP BY balance_sign ORDER BY balance_sign`))[0]).map(row => ({ sign: row.sign, orders: Number(row.orders) }))
    t.same(await signs(), [{ sign: 0, orders: 250 }, { sign: 1, orders: 2250 }], 'every order signed from its total')
    t.same((await storage.list({ balance: 'settled', order: 'desc', limit: 3 })).map(order => order.id), ['ord_02500', 'ord_02490', 'ord_02480'], 'the settled, newest first')
    t.same(await storage.list({ balance: 'owed', order: 'asc', limit: 3 }), [], 'none owed')

    // An instance of release 0.2, still running, stores orders after the upgrade: signed at the next start.
    await insertOrders(2501, 2510)
    await mysqlStorage({ client: db.client, table }).init()
    t.same(await signs(), [{ sign: 0, orders: 251 }, { sign: 1, orders: 2259 }], 'signed at the next start')

    const [order] = await storage.list({ customerId: 'cus_1', balance: 'due', order: 'asc', limit: 1 })
    const { after, event } = changed(order!, { paid: 3000, balance: -500 })
    t.equal(await storage.replace(after, 1, event, { key: 'change:1', fingerprint: 'f', expiresAt: FAR_FUTURE }), true)
    t.same(await storage.readChangeClaim('change:1', after.updatedAt), { fingerprint: 'f', order: after }, 'a change\'s claim keeps its answer')
    t.same((await storage.list({ balance: 'owed', order: 'asc', limit: 3 })).map(owed => owed.id), [order!.id], 'the changed order is owed')
  })
}
