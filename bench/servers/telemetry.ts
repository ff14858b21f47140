// The plugin on memory storage under the telemetry of BENCH_TELEMETRY (see telemetry-mode.ts), making its calls itself.
import Fastify from 'fastify'
import { loadPlugin } from '../storages.js'
import { serve } from './serve.js'
import './telemetry-mode.js'

const { orderPlugin, memoryStorage } = await loadPlugin()
const app = Fastify()
// A workflow with a cycle, so every updateOrderStatus the benchmark sends moves an order.
await app.register(orderPlugin, { storage: memoryStorage(), workflow: { initial: 'pending', transitions: { pending: ['paid'], paid: ['pending'] } } })
await serve(app)
