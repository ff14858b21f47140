// The plugin on memory storage under the telemetry of BENCH_TELEMETRY (see telemetry-mode.ts). Until the plugin
// makes its telemetry calls itself, hooks and listeners make them as its routes and rules will (a span per
// route from body validation to the response, the order's id, the counters); `plain` is the plugin without
// them. With BENCH_TELEMETRY_WIRED set the plugin is measured as it is.
import Fastify, { type FastifyInstance } from 'fastify'
import { libraryDir, loadPlugin } from '../storages.js'
import { serve } from './serve.js'
import { telemetryMode } from './telemetry-mode.js'

type Telemetry = import('../../lib/telemetry.js').Telemetry
type RouteSpan = import('../../lib/telemetry.js').RouteSpan

const spanNames: Record<string, 'order.create' | 'order.list' | 'order.update_status'> = {
  '/order/createOrder': 'order.create',
  '/order/getOrderList': 'order.list',
  '/order/updateOrderStatus': 'order.update_status'
}
const spans = new WeakMap<object, RouteSpan>()

function callTelemetry (app: FastifyInstance, telemetry: Telemetry): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const span = telemetry.startSpan(spanNames[request.routeOptions.url!]!)
    spans.set(request, span)
    telemetry.withSpan(span, done)
  })
  app.addHook('preSerialization', (request, _reply, payload: { id?: string }, done) => {
    if (payload.id !== undefined) spans.get(request)!.setOrderId(payload.id)
    done(null, payload)
  })
  app.addHook('onError', (request, _reply, error, done) => {
    spans.get(request)?.fail(error)
    done()
  })
  app.addHook('onResponse', (request, _reply, done) => {
    spans.get(request)?.end()
    done()
  })
}

const { orderPlugin, memoryStorage } = await loadPlugin()
const app = Fastify()
const emulated = telemetryMode !== 'plain' && process.env.BENCH_TELEMETRY_WIRED === undefined
let telemetry: Telemetry | undefined
if (emulated) {
  const { loadTelemetry } = await import(new URL('telemetry.js', libraryDir).href) as typeof import('../../lib/telemetry.js')
  telemetry = await loadTelemetry()
  callTelemetry(app, telemetry)
}
// A workflow with a cycle, so every updateOrderStatus the benchmark sends moves an order.
await app.register(orderPlugin, { storage: memoryStorage(), workflow: { initial: 'pending', transitions: { pending: ['paid'], paid: ['pending'] } } })
if (telemetry !== undefined) {
  const { created, statusChanged } = telemetry
  app.orders.on('created', () => created())
  app.orders.on('statusChanged', ({ from, to }) => statusChanged(from, to))
}
await serve(app)
