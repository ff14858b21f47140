// The plugin under load with changes after placement on (BENCH_CHANGES=1: `changes: { route: true }`)
// or off, on the storage BENCH_STORAGE names (in the tables BENCH_TABLE names, on a database). Asked
// { seed: n } over IPC, it creates n pending orders of two mugs over ten customers and answers their ids.
import Fastify from 'fastify'
import { loadPlugin, openStorage, type StorageName } from '../storages.js'
import { seedOnRequest, serve } from './serve.js'

const { orderPlugin } = await loadPlugin()
const { storage, close } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName, {
  applicationName: process.env.BENCH_APPLICATION_NAME,
  table: process.env.BENCH_TABLE
})
const app = Fastify()
app.addHook('onClose', close)
// Spread in, so that this server type-checks against a build from before the option too.
const changes = process.env.BENCH_CHANGES === '1' ? { changes: { route: true } } : {}
await app.register(orderPlugin, { storage, ...changes })
await serve(app)

// Ten customers, so the benchmark's page (filter.customerId cus_3) is a full one with a next cursor.
seedOnRequest(app, index => ({
  customerId: `cus_${index % 10}`,
  currency: 'EUR',
  items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }],
  metadata: { channel: 'web' }
}))
