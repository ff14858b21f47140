// The plugin under load: Fastify with fastify-order on the storage named by BENCH_STORAGE (in the
// tables BENCH_TABLE names, on PostgreSQL), with the benchmark's custom fields when BENCH_CUSTOM_FIELDS
// is set, and with BENCH_SCOPE (JSON) the scope `authorize` gives every request.
import Fastify from 'fastify'
import { customFields } from '../custom-fields.js'
import { loadPlugin, openStorage, type StorageName } from '../storages.js'
import { serve } from './serve.js'

const { orderPlugin } = await loadPlugin()
const { storage, close } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName, {
  applicationName: process.env.BENCH_APPLICATION_NAME,
  table: process.env.BENCH_TABLE
})
const app = Fastify()
app.addHook('onClose', close)
const scope = process.env.BENCH_SCOPE === undefined ? undefined : JSON.parse(process.env.BENCH_SCOPE)
await app.register(orderPlugin, {
  storage,
  ...process.env.BENCH_CUSTOM_FIELDS !== undefined && { customFields },
  ...scope !== undefined && { authorize: () => scope }
})
await serve(app)
