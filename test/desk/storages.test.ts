// The desk on every storage: the list, an order and a move through the page, on PGlite, the PostgreSQL server (DATABASE_URL) and MariaDB or MySQL (MYSQL_URL).
import t, { type Test } from 'tap'
import type { OrderStorage } from '../../lib/index.js'
import { postgresStorage } from '../../lib/storage/postgres/postgres-storage.js'
import { buildApp, createOrder } from '../helper.js'
import { testDatabase } from '../postgres-helper.js'
import { listening, newPage, pageErrors, skip } from './browser.js'

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

for (const [name, shared] of storages) {
  t.test(`on ${name}, the desk lists orders, opens one and moves it`, { skip: skip || (typeof shared === 'string' && shared) }, async t => {
    const [storage] = await (shared as SharedStorages)(t)
    const app = await buildApp(t, { desk: true, changes: true, storage })
    const order = await createOrder(app, { reference: 'cart_1' })
    await createOrder(app, { customerId: 'cus_other' })
    const page = await newPage(t)
    await page.goto(`${await listening(app)}/order/desk?q=%23${order.number}`)
    await page.getByRole('status').filter({ hasText: 'Showing 1 order' }).waitFor()
    await page.getByRole('link', { name: `#${order.number}` }).click()
    await page.getByRole('button', { name: 'Move to paid' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click()
    await page.getByRole('button', { name: 'Move to shipped' }).waitFor()
    t.match((await app.orders.list({ filter: { ids: [order.id] } })).items[0], { status: 'paid', version: 2 })
    t.same(pageErrors.get(page), [])
  })
}
