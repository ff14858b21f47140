// The plugin under the telemetry of BENCH_TELEMETRY (see telemetry-mode.ts), making its calls itself, on
// the storage BENCH_STORAGE names (memory by default; on PostgreSQL in tables of its own, BENCH_TABLE).
import Fastify from 'fastify'
import { loadPlugin, openStorage, type StorageName } from '../storages.js'
import { serve } from './serve.js'
import { afterRegister } from './telemetry-mode.js'

const { orderPlugin } = await loadPlugin()
const { storage, close } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName, { table: process.env.BENCH_TABLE })
const app = Fastify()
app.addHook('onClose', close)
// A workflow with a cycle, so every updateOrderStatus the benchmark sends moves an order.
await app.register(orderPlugin, { storage, workflow: { initial: 'pending', transitions: { pending: ['paid'], paid: ['pending'] } } })
await afterRegister()
await serve(app)
