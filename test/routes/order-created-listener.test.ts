// Listeners of app.orders: they get the stored change before the response, and what they throw never fails the request.
import t from 'tap'
import { buildApp, logLines, orderBody, post } from '../helper.js'
import { oddFailures } from '../feed/odd-failures.js'

t.test('a created listener receives the stored order before the response is sent', async t => {
  const app = await buildApp(t)
  const heard: string[] = []
  app.orders.on('created', order => { heard.push(order.id) })
  const { status, body } = await post(app, 'createOrder', orderBody())
  t.equal(status, 201)
  t.same(heard, [body.id])
})

t.test('metadata keeps a "__proto__" key as plain data and stays apart from the caller\'s object', async t => {
  const app = await buildApp(t)
  const metadata = JSON.parse('{"__proto__": "polluted", "channel": "web"}')
  const order = await app.orders.create(orderBody({ metadata }))
  t.same(Object.keys(order.metadata), ['__proto__', 'channel'])
  t.equal(Object.getPrototypeOf(order.metadata), Object.prototype)
  metadata.channel = 'changed'
  const [stored] = (await app.orders.list({ filter: { ids: [order.id] } })).items
  t.equal(stored!.metadata.channel, 'web')
})

t.test('a listener throwing a value that describes itself badly is logged; the client still gets its stored order', async t => {
  for (const [what, thrown] of oddFailures()) {
    const { lines, stream } = logLines()
    const app = await buildApp(t, {}, { logger: { stream } })
    app.orders.on('created', () => { throw thrown })
    app.orders.on('statusChanged', async () => { throw thrown })
    const created = await post(app, 'createOrder', orderBody())
    t.equal(created.status, 201, `${what}: created`)
    const moved = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' })
    t.equal(moved.status, 200, `${what}: moved`)
    t.same((await app.orders.list()).items, [moved.body], `${what}: stored`)
    t.same(lines.filter(line => /listener failed/.test(line.msg)).map(line => line.event), ['created', 'statusChanged'], `${what}: each failure logged`)
  }
})
