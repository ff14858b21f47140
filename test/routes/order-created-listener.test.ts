import t from 'tap'
import { buildApp, orderBody, post } from '../helper.js'

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
