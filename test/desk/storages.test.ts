// The desk on every storage: the list, an order and a move through the page, on PGlite, the PostgreSQL server (DATABASE_URL) and MariaDB or MySQL (MYSQL_URL).
import t from 'tap'
import { buildApp, createOrder } from '../helper.js'
import { listening, newPage, pageErrors, skip } from './browser.js'
import { storages, type SharedStorages } from './storages.js'

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
