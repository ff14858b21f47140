import t from 'tap'
import { memoryStorage } from '../lib/index.js'
import { buildApp, createOrder, storeOrder } from './helper.js'

t.test('memoryStorage refuses a second order with an id it already holds', async t => {
  const storage = memoryStorage()
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  await t.rejects(storeOrder(storage, { ...order, customerId: 'someone_else' }), /already stored/)
  t.equal((await storage.get(order.id))!.customerId, order.customerId, 'the first order is untouched')
  t.equal((await storage.list({ order: 'desc', limit: 10 })).length, 1)
})
