import t from 'tap'
import { buildApp, createOrder, post } from '../helper.js'

t.test('following nextCursor visits every order of the filter once, newest first', async t => {
  const app = await buildApp(t)
  const created = []
  for (let index = 0; index < 5; index++) created.push(await createOrder(app, { customerId: 'cus_walk' }))
  await createOrder(app, { customerId: 'cus_other' })

  const seen: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const { status, body } = await post(app, 'getOrderList', { limit: 2, filter: { customerId: 'cus_walk' }, ...(cursor === undefined ? {} : { cursor }) })
    t.equal(status, 200)
    seen.push(...body.items.map((order: { id: string }) => order.id))
    cursor = body.nextCursor ?? undefined
    pages++
  } while (cursor !== undefined)

  t.equal(pages, 3)
  const newestFirst = [...created].sort((a, b) => a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)
  t.same(seen, newestFirst.map(order => order.id))
})

t.test('getOrderList without any body returns the first page', async t => {
  const app = await buildApp(t)
  const order = await createOrder(app)
  const response = await app.inject({ method: 'POST', url: '/order/getOrderList' })
  t.equal(response.statusCode, 200)
  t.same(response.json().items.map((item: { id: string }) => item.id), [order.id])
  t.equal(response.json().nextCursor, null)
})

t.test('a cursor stays valid however many other filters were paged in between', async t => {
  const app = await buildApp(t)
  for (let index = 0; index < 2; index++) await createOrder(app, { customerId: 'cus_first' })
  const first = await app.orders.list({ limit: 1, filter: { customerId: 'cus_first' } })
  // More distinct filters than the plugin remembers digests of.
  let issued = 0
  for (let index = 0; index < 300; index++) {
    const other = await app.orders.list({ limit: 1, filter: { customerId: 'cus_first', createdFrom: new Date(Date.UTC(2000, 0, 1 + index)).toISOString() } })
    if (other.nextCursor !== null) issued++
  }
  t.equal(issued, 300)
  const second = await app.orders.list({ limit: 1, cursor: first.nextCursor!, filter: { customerId: 'cus_first' } })
  t.equal(second.items.length, 1)
  t.not(second.items[0]!.id, first.items[0]!.id)
})

t.test('a cursor issued for a long ids filter works with that filter only', async t => {
  const app = await buildApp(t)
  const orders = []
  for (let index = 0; index < 3; index++) orders.push(await createOrder(app))
  const ids = [...orders.map(order => order.id), ...Array.from({ length: 40 }, (_, index) => `missing-${index}-${'x'.repeat(20)}`)]
  const first = await app.orders.list({ limit: 2, filter: { ids } })
  const second = await app.orders.list({ limit: 2, cursor: first.nextCursor!, filter: { ids } })
  t.same([...first.items, ...second.items].map(order => order.id).sort(), orders.map(order => order.id).sort())
  const { status, body } = await post(app, 'getOrderList', { limit: 2, cursor: first.nextCursor, filter: { ids: ids.slice(1) } })
  t.equal(status, 400)
  t.equal(body.code, 'ORDER_INVALID_CURSOR')
})
