// updateOrderStatus under load, with one guard on the workflow (BENCH_GUARD=1) or none, on the storage
// BENCH_STORAGE names (in the tables BENCH_TABLE names, on PostgreSQL). Asked { seed: n } over IPC, it
// creates n pending orders and answers their ids: each request of the benchmark moves a fresh one to paid.
import Fastify from 'fastify'
import { loadPlugin, openStorage, type StorageName } from '../storages.js'
import { seedOnRequest, serve } from './serve.js'

const { orderPlugin, defaultWorkflow } = await loadPlugin()
const { storage, close } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName, {
  applicationName: process.env.BENCH_APPLICATION_NAME,
  table: process.env.BENCH_TABLE
})
const app = Fastify()
app.addHook('onClose', close)
// A guard as a shop writes one: it reads the order as stored and decides.
const guards = { paid: ({ order }: { order: { total: number } }) => order.total >= 0 || 'a paid order has a total' }
await app.register(orderPlugin, { storage, workflow: process.env.BENCH_GUARD === '1' ? { ...defaultWorkflow, guards } : defaultWorkflow })
await serve(app)

const body = { customerId: 'cus_bench', currency: 'EUR', items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }], metadata: { channel: 'web' } }
seedOnRequest(app, () => body)
