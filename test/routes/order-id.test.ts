import t from 'tap'
import { newOrderId } from '../../lib/orders/ids.js'
import { buildApp } from '../helper.js'

t.test('order ids ascend in creation order, within a millisecond too, and stay unguessable', async t => {
  const ids = [newOrderId(1_700_000_000_000), newOrderId(1_700_000_000_000), newOrderId(1_700_000_000_000), newOrderId(1_700_000_000_001)]
  t.same([...ids].sort(), ids, 'string order is creation order')
  t.equal(new Set(ids.map(id => id.slice(16))).size, 4, 'each carries its own random part')
  for (const id of ids) t.match(id, /^[0-9a-f]{48}$/)
})

t.test('orders created in one millisecond list in the order they were created', async t => {
  const app = await buildApp(t)
  const created: string[] = []
  for (let i = 0; i < 30; i++) created.push((await app.orders.create({ customerId: 'c', currency: 'EUR', items: [{ sku: 'a', quantity: 1, unitPrice: i }] })).id)
  const page = await app.orders.list({ order: 'asc', limit: 30 })
  t.same(page.items.map(order => order.id), created)
})
