import t from 'tap'
import { buildApp, createOrder, post } from './helper.js'

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
