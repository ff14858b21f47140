// The plugin on memory storage under the telemetry of BENCH_TELEMETRY (see telemetry-mode.ts). Until the plugin
// makes its telemetry calls itself, hooks make them as its routes and rules will (a span per
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
declare module 'fastify' {
  interface FastifyRequest {
    orderSpan: RouteSpan | null
  }
}

/** A stored order as the routes answer it: enough to tell a create and a move. */
interface Answered {
  id?: string
  statusHistory?: Array<{ status: string }>
}

/** The calls the routes and rules will make, made by hooks: no listener, so no order is frozen for them. */
function callTelemetry (app: FastifyInstance, telemetry: Telemetry): void {
  app.decorateRequest('orderSpan', null)
  app.addHook('preValidation', (request, _reply, done) => {
    request.orderSpan = telemetry.startSpan(spanNames[request.routeOptions.url!]!)
    telemetry.withSpan(request.orderSpan, done)
  })
  app.addHook('preSerialization', (request, reply, payload: Answered, done) => {
    if (payload.id !== undefined) request.orderSpan!.setOrderId(payload.id)
    // Every create answers 201 and every move the benchmark sends moves: the counters as the rules will count them.
    if (reply.statusCode === 201) telemetry.created()
    else if (payload.statusHistory !== undefined) telemetry.statusChanged(payload.statusHistory.at(-2)!.status, payload.statusHistory.at(-1)!.status)
    done(null, payload)
  })
  app.addHook('onError', (request, _reply, error, done) => {
    request.orderSpan?.fail(error)
    done()
  })
  app.addHook('onResponse', (request, _reply, done) => {
    request.orderSpan?.end()
    done()
  })
}

const { orderPlugin, memoryStorage } = await loadPlugin()
const app = Fastify()
const emulated = telemetryMode !== 'plain' && process.env.BENCH_TELEMETRY_WIRED === undefined
if (emulated) {
  const { loadTelemetry } = await import(new URL('telemetry.js', libraryDir).href) as typeof import('../../lib/telemetry.js')
  callTelemetry(app, await loadTelemetry())
}
// A workflow with a cycle, so every updateOrderStatus the benchmark sends moves an order.
await app.register(orderPlugin, { storage: memoryStorage(), workflow: { initial: 'pending', transitions: { pending: ['paid'], paid: ['pending'] } } })
await serve(app)
