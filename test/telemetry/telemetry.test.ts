// Telemetry: the contract's spans and metrics through the host's OpenTelemetry SDK, and nothing without one.
import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import Fastify from 'fastify'
import t from 'tap'
import { codes } from '../../lib/errors.js'
import { memoryStorage, orderPlugin, type OrderEvent, type OrderPluginOptions } from '../../lib/index.js'
import { failureType } from '../../lib/feed/describe-failure.js'
import { loadTelemetry, noTelemetry } from '../../lib/telemetry/telemetry.js'
import { storedOrder, storeOrder } from '../helper.js'
import { fakeReplicaStorage } from '../fake-replicas.js'

const ALLOWED_ATTRIBUTES = ['order.id', 'order.event.type', 'order.subscription', 'error.type', 'db.replica']

/** Collects on demand what was recorded since the last collection, as a host's exporter would on its interval. */
class CollectingReader extends MetricReader {
  constructor () {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA })
  }

  protected async onShutdown (): Promise<void> {}
  protected async onForceFlush (): Promise<void> {}
}

const exporter = new InMemorySpanExporter()
const reader = new CollectingReader()
const outside = trace.getTracer('host')

function finishedSpans (): ReadableSpan[] {
  const spans = exporter.getFinishedSpans()
  exporter.reset()
  return spans
}

async function collected (): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect()
  const found = new Map<string, MetricData>()
  for (const scope of resourceMetrics.scopeMetrics) {
    if (scope.scope.name !== 'fastify-order') continue
    for (const metric of scope.metrics) found.set(metric.descriptor.name, metric)
  }
  return found
}

/** Each data point of a metric as [attributes, value]. */
function pointsOf (metric: MetricData | undefined): Array<[object, unknown]> {
  return (metric?.dataPoints ?? []).map(point => [point.attributes, point.value] as [object, unknown])
}

t.test('with the API but no SDK registered when the plugin loads, there is no telemetry at all: nothing to pay for', async t => {
  t.equal(await loadTelemetry(), noTelemetry)
  // A host that starts its SDK first gets the plugin's telemetry; one registered after gets none of it.
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin)
  register()
  await app.orders.create({ customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 1 }] })
  t.same(finishedSpans(), [], 'no span')
  t.same([...(await collected()).keys()], [], 'no metric')
})

function register (): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  t.teardown(async () => {
    await reader.shutdown()
    trace.disable()
    metrics.disable()
    context.disable()
  })
}

t.test('without @opentelemetry/api, the plugin runs as before and reports nothing', async t => {
  for (const load of [() => Promise.reject(new Error('Cannot find package \'@opentelemetry/api\'')), async () => ({})]) {
    const telemetry = await loadTelemetry(load)
    t.equal(telemetry, noTelemetry)
    t.equal(await telemetry.span('order.create', async span => { span.setOrderId('ord_1'); return 'created' }), 'created')
    await t.rejects(telemetry.span('order.create', async () => { throw new TypeError('x') }), TypeError)
    const route = telemetry.startSpan('order.create')
    t.equal(telemetry.withSpan(route, () => 'order'), 'order')
    route.fail(new Error('x'))
    route.end()
    t.equal(await telemetry.deliver('mail', { type: 'created', order: { id: 'ord_1' } }, async () => 'handled'), 'handled')
    telemetry.created()
    telemetry.statusChanged('pending', 'paid')
    telemetry.delivered('mail', 'failed', 0.1)
    telemetry.observeLag(() => [{ subscription: 'mail', events: 1 }])
    telemetry.observeHeldBack(() => 1)
    telemetry.close()
  }
  t.same(finishedSpans(), [], 'no span, though an SDK is registered')
  t.same([...(await collected()).keys()], [], 'no metric either')
})

t.test('with the SDK', async t => {
  const telemetry = await loadTelemetry()
  t.teardown(() => telemetry.close())
  t.ok(telemetry.tracing)

  t.test('with a meter provider and no tracer provider, the counters count and the routes get no hooks; the other way round, spans and no counts', async t => {
    const api = await import('@opentelemetry/api')
    const withTrace = (getTracerProvider: () => unknown) => ({ ...api, trace: Object.create(api.trace, { getTracerProvider: { value: getTracerProvider } }) })
    const metersOnly = await loadTelemetry(async () => withTrace(() => new api.ProxyTracerProvider()))
    t.teardown(() => metersOnly.close())
    t.equal(metersOnly.tracing, false)
    // Its tracer records nothing: each span is a call of the work, nothing more.
    t.equal(await metersOnly.span('order.list', async span => { span.setOrderId('ord_1'); return 'page' }), 'page')
    const route = metersOnly.startSpan('order.create')
    t.equal(metersOnly.withSpan(route, () => 'order'), 'order')
    t.equal(await metersOnly.deliver('erp', { type: 'created', order: { id: 'ord_1' } }, async () => 'handled'), 'handled')
    t.same(finishedSpans(), [])
    metersOnly.created()
    t.same(pointsOf((await collected()).get('fastify_order.orders.created')), [[{}, 1]])
    // A tracer provider that is not the API's proxy: a host's own, registered some other way.
    const ownProvider = await loadTelemetry(async () => withTrace(() => api.trace.getTracerProvider().getTracer('x') && { getTracer: () => api.trace.getTracer('x') }))
    t.equal(ownProvider.tracing, true)
    const tracesOnly = await loadTelemetry(async () => ({ ...api, metrics: Object.create(api.metrics, { getMeterProvider: { value: () => ({ getMeter: () => api.createNoopMeter() }) } }) }))
    t.equal(tracesOnly.tracing, true)
    const neither = await loadTelemetry(async () => ({ ...withTrace(() => new api.ProxyTracerProvider()), metrics: Object.create(api.metrics, { getMeterProvider: { value: () => ({ getMeter: () => api.createNoopMeter() }) } }) }))
    t.equal(neither, noTelemetry)
  })

  t.test('an operation is a span named after it, from the tracer fastify-order, child of the active span', async t => {
    const order = await outside.startActiveSpan('outer', async outer => {
      try {
        return await telemetry.span('order.create', async span => {
          // What the operation starts (a storage query, say) is the operation's child.
          outside.startSpan('storage').end()
          span.setOrderId('ord_1')
          return { id: 'ord_1' }
        })
      } finally {
        outer.end()
      }
    })
    t.same(order, { id: 'ord_1' })
    const [storage, create, outer] = finishedSpans() as [ReadableSpan, ReadableSpan, ReadableSpan]
    t.same([storage.name, create.name, outer.name], ['storage', 'order.create', 'outer'])
    t.equal(create.instrumentationScope.name, 'fastify-order')
    t.equal(create.parentSpanContext?.spanId, outer.spanContext().spanId)
    t.equal(storage.parentSpanContext?.spanId, create.spanContext().spanId)
    t.equal(create.kind, SpanKind.INTERNAL)
    t.same(create.attributes, { 'order.id': 'ord_1' })
    t.equal(create.status.code, SpanStatusCode.UNSET)
  })

  t.test('a failure sets the status to ERROR with error.type its code, and is passed on unchanged', async t => {
    const failures: unknown[] = [
      new codes.ORDER_INVALID_TRANSITION('paid', 'pending'),
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    ]
    for (const failure of failures) {
      await t.rejects(telemetry.span('order.update_status', async span => {
        span.setOrderId('ord_1')
        throw failure
      }), failure as Error)
    }
    const spans = finishedSpans()
    t.same(spans.map(span => [span.name, span.status.code, span.attributes]), [
      ['order.update_status', SpanStatusCode.ERROR, { 'order.id': 'ord_1', 'error.type': 'ORDER_INVALID_TRANSITION' }],
      ['order.update_status', SpanStatusCode.ERROR, { 'order.id': 'ord_1', 'error.type': 'ECONNREFUSED' }]
    ])
    t.notOk(spans.some(span => span.status.message !== undefined || span.events.length > 0), 'no message, no exception event: they may hold what a client sent')
  })

  t.test('a thrown value without a code is named by its constructor, or unknown', async t => {
    class CustomFailure extends Error {}
    const hostile = new Proxy({}, { get () { throw new Error('no') } })
    const thrown: Array<[unknown, string]> = [
      [new TypeError('bad'), 'TypeError'],
      [new CustomFailure('bad'), 'CustomFailure'],
      [{ code: 503 }, '503'],
      [{ code: '' }, 'Object'],
      ['a string', 'String'],
      [42, 'Number'],
      [null, 'unknown'],
      [undefined, 'unknown'],
      [Object.create(null), 'unknown'],
      [new (class {})(), 'unknown'],
      [hostile, 'unknown']
    ]
    for (const [value, type] of thrown) t.equal(failureType(value), type, String(type))
    // eslint-disable-next-line no-throw-literal -- what a careless handler throws
    await t.rejects(telemetry.span('order.list', async () => { throw null }))
    const [span] = finishedSpans()
    t.same([span?.status.code, span?.attributes], [SpanStatusCode.ERROR, { 'error.type': 'unknown' }])
  })

  t.test('a route span starts at validation, makes what runs under it its children, and ends at the response', async t => {
    const spans = outside.startActiveSpan('request', request => {
      const ok = telemetry.startSpan('order.list')
      const inside = telemetry.withSpan(ok, () => trace.getActiveSpan())
      ok.end()
      ok.end()
      const invalid = telemetry.startSpan('order.create')
      invalid.fail(new codes.FST_ERR_VALIDATION('body must have required property \'items\''))
      invalid.end()
      request.end()
      return { inside }
    })
    const finished = finishedSpans()
    t.equal(finished.length, 3, 'a span ended twice is exported once')
    const [list, create, request] = finished as [ReadableSpan, ReadableSpan, ReadableSpan]
    t.equal(spans.inside?.spanContext().spanId, list.spanContext().spanId, 'active inside withSpan')
    t.same([list.name, list.status.code, list.parentSpanContext?.spanId], ['order.list', SpanStatusCode.UNSET, request.spanContext().spanId])
    t.same([create.name, create.status.code, create.attributes], ['order.create', SpanStatusCode.ERROR, { 'error.type': 'FST_ERR_VALIDATION' }])
  })

  t.test('a delivery is a consumer span of its own trace naming the subscription, the event type and the order', async t => {
    const event = { id: 'evt_1', type: 'statusChanged', at: '2026-01-01T00:00:00.000Z', order: { id: 'ord_1', customerId: 'cus_secret' }, from: 'pending' }
    await outside.startActiveSpan('request', async request => {
      t.equal(await telemetry.deliver('mail', event, async () => 'handled'), 'handled')
      const failure = new Error('receiver answered 500')
      await t.rejects(telemetry.deliver('mail', event, async () => { throw failure }), failure)
      request.end()
    })
    const [ok, failed] = finishedSpans()
    for (const span of [ok, failed]) {
      t.equal(span?.name, 'order.deliver')
      t.equal(span?.kind, SpanKind.CONSUMER)
      t.equal(span?.parentSpanContext, undefined, 'not a child of the request that was active')
    }
    t.same(ok?.attributes, { 'order.subscription': 'mail', 'order.event.type': 'statusChanged', 'order.id': 'ord_1' })
    t.same([failed?.status.code, failed?.attributes['error.type']], [SpanStatusCode.ERROR, 'Error'])
  })

  t.test('the counters, the histogram and the gauges have the contract\'s names, units and attributes', async t => {
    telemetry.created()
    telemetry.created()
    telemetry.statusChanged('pending', 'paid')
    telemetry.delivered('mail', 'ok', 0.02)
    telemetry.delivered('mail', 'failed', 0.5)
    telemetry.delivered('mail', 'failed', 0.25)
    telemetry.delivered('mail', 'dead_lettered', 1)
    let lagReads = 0
    telemetry.observeLag(() => {
      lagReads++
      return [{ subscription: 'mail', events: 12 }, { subscription: 'erp', events: 0 }]
    })
    telemetry.observeHeldBack(async () => 75.5)

    const found = await collected()
    t.same([...found.keys()].sort(), [
      'fastify_order.deliveries', 'fastify_order.delivery.duration', 'fastify_order.feed.held_back',
      'fastify_order.orders.created', 'fastify_order.orders.status_changed', 'fastify_order.subscription.lag'
    ])
    t.same(Object.fromEntries([...found].map(([name, metric]) => [name, metric.descriptor.unit])), {
      'fastify_order.orders.created': '{order}',
      'fastify_order.orders.status_changed': '{order}',
      'fastify_order.deliveries': '{delivery}',
      'fastify_order.delivery.duration': 's',
      'fastify_order.subscription.lag': '{event}',
      'fastify_order.feed.held_back': 's'
    })
    t.same(pointsOf(found.get('fastify_order.orders.created')), [[{}, 2]])
    t.same(pointsOf(found.get('fastify_order.orders.status_changed')), [[{ 'order.status.from': 'pending', 'order.status.to': 'paid' }, 1]])
    t.same(pointsOf(found.get('fastify_order.deliveries')), [
      [{ 'order.subscription': 'mail', outcome: 'ok' }, 1],
      [{ 'order.subscription': 'mail', outcome: 'failed' }, 2],
      [{ 'order.subscription': 'mail', outcome: 'dead_lettered' }, 1]
    ])
    const failedDurations = found.get('fastify_order.delivery.duration')!.dataPoints[1]!
    t.same(failedDurations.attributes, { 'order.subscription': 'mail', outcome: 'failed' })
    t.match(failedDurations.value, { count: 2, sum: 0.75 })
    t.same(pointsOf(found.get('fastify_order.subscription.lag')), [[{ 'order.subscription': 'mail' }, 12], [{ 'order.subscription': 'erp' }, 0]])
    t.same(pointsOf(found.get('fastify_order.feed.held_back')), [[{}, 75.5]])

    telemetry.close()
    const after = await collected()
    t.equal(lagReads, 1, 'closed: the gauges read nothing more')
    t.same([pointsOf(after.get('fastify_order.subscription.lag')), pointsOf(after.get('fastify_order.feed.held_back'))], [[], []])
  })

  t.test('a gauge whose read fails reports nothing that time, and the others still report', async t => {
    const other = await loadTelemetry()
    t.teardown(() => other.close())
    other.observeLag(async () => { throw new Error('storage unavailable') })
    other.observeHeldBack(() => { throw new Error('storage unavailable') })
    other.created()
    const found = await collected()
    t.same([pointsOf(found.get('fastify_order.subscription.lag')), pointsOf(found.get('fastify_order.feed.held_back'))], [[], []])
    t.same(pointsOf(found.get('fastify_order.orders.created')), [[{}, 1]])
  })

  t.test('through the routes: a span per request from validation on, child of the HTTP span, ERROR with its code for a 400', async t => {
    const { app, http } = await hostApp({ authorize: request => request.headers['x-user'] === 'bad' ? { customerId: 42 } as never : true })
    t.teardown(() => app.close())

    const created = await app.inject({ method: 'POST', url: '/order/createOrder', payload: { customerId: 'cus_secret', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 100 }] } })
    t.equal(created.statusCode, 201)
    const order = created.json()
    t.equal((await app.inject({ method: 'POST', url: '/order/createOrder', payload: { customerId: 'cus_secret' } })).statusCode, 400)
    t.equal((await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id: order.id, status: 'paid' } })).statusCode, 200)
    t.equal((await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id: 'ord_missing', status: 'paid' } })).statusCode, 404)
    t.equal((await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id: order.id, status: 'pending' } })).statusCode, 409)
    t.equal((await app.inject({ method: 'POST', url: '/order/getOrderList', payload: { filter: { customerId: 'cus_secret' } } })).statusCode, 200)
    t.equal((await app.inject({ method: 'POST', url: '/order/getOrderList', headers: { 'x-user': 'bad' } })).statusCode, 500)
    // Before validation, no span: the body was never read.
    t.equal((await app.inject({ method: 'POST', url: '/order/getOrderList', headers: { 'content-type': 'text/plain' }, payload: 'x' })).statusCode, 415)

    const spans = finishedSpans()
    const ours = spans.filter(span => span.instrumentationScope.name === 'fastify-order')
    t.same(ours.map(span => [span.name, span.status.code, span.attributes]), [
      ['order.create', SpanStatusCode.UNSET, { 'order.id': order.id }],
      ['order.create', SpanStatusCode.ERROR, { 'error.type': 'FST_ERR_VALIDATION' }],
      ['order.update_status', SpanStatusCode.UNSET, { 'order.id': order.id }],
      ['order.update_status', SpanStatusCode.ERROR, { 'error.type': 'ORDER_NOT_FOUND' }],
      ['order.update_status', SpanStatusCode.ERROR, { 'order.id': order.id, 'error.type': 'ORDER_INVALID_TRANSITION' }],
      ['order.list', SpanStatusCode.UNSET, {}],
      ['order.list', SpanStatusCode.ERROR, { 'error.type': 'ORDER_INVALID_SCOPE' }]
    ])
    const requests = spans.filter(span => span.name === http).slice(0, ours.length)
    t.same(ours.map(span => span.parentSpanContext?.spanId), requests.map(span => span.spanContext().spanId), 'each a child of its HTTP span')
    for (const span of ours) {
      t.ok(Object.keys(span.attributes).every(key => ALLOWED_ATTRIBUTES.includes(key)), `${span.name}: only the contract's attributes`)
      t.notOk(JSON.stringify(span.attributes).includes('cus_secret'), `${span.name}: no customer id`)
    }
    const found = await collected()
    t.same(pointsOf(found.get('fastify_order.orders.created')), [[{}, 1]])
    t.same(pointsOf(found.get('fastify_order.orders.status_changed')), [[{ 'order.status.from': 'pending', 'order.status.to': 'paid' }, 1]])
  })

  t.test('changes: an order.change span per changeOrder request and app.orders.change call, with the order id once found', async t => {
    // Stored without the plugin, so the created counter the other tests read stays as it was.
    const storage = memoryStorage()
    const order = storedOrder()
    await storeOrder(storage, order)
    const { app } = await hostApp({ storage, changes: { route: true } })
    t.teardown(() => app.close())
    const change = { id: order.id, actions: [{ type: 'recordPayment', amount: 100, reference: 'pi_1' }] }
    t.equal((await app.inject({ method: 'POST', url: '/order/changeOrder', payload: change })).statusCode, 200)
    t.equal((await app.inject({ method: 'POST', url: '/order/changeOrder', payload: { ...change, id: 'ord_missing' } })).statusCode, 404)
    await t.rejects(app.orders.change({ id: order.id, actions: [{ type: 'recordRefund', amount: 500, reference: 're_1' }] }), { code: 'ORDER_CHANGE_REFUSED' })
    const ours = finishedSpans().filter(span => span.instrumentationScope.name === 'fastify-order' && span.name === 'order.change')
    t.same(ours.map(span => [span.status.code, span.attributes]), [
      [SpanStatusCode.UNSET, { 'order.id': order.id }],
      [SpanStatusCode.ERROR, { 'error.type': 'ORDER_NOT_FOUND' }],
      [SpanStatusCode.ERROR, { 'order.id': order.id, 'error.type': 'ORDER_CHANGE_REFUSED' }]
    ])
  })

  t.test('through app.orders: a span per call, child of the caller\'s active span, a failed validation included', async t => {
    const { app } = await hostApp()
    t.teardown(() => app.close())
    const job = await outside.startActiveSpan('nightly job', async job => {
      try {
        const order = await app.orders.create({ customerId: 'cus_secret', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 100 }] })
        await app.orders.updateStatus({ id: order.id, status: 'paid' })
        await app.orders.list({ filter: { customerId: 'cus_secret' } })
        await t.rejects(app.orders.list({ limit: 0 }), { code: 'FST_ERR_VALIDATION' })
        await t.rejects(app.orders.updateStatus({ id: 'ord_client_text', status: 'paid' }), { code: 'ORDER_NOT_FOUND' })
        return { order, id: job.spanContext().spanId }
      } finally {
        job.end()
      }
    })
    const ours = finishedSpans().filter(span => span.instrumentationScope.name === 'fastify-order')
    t.same(ours.map(span => [span.name, span.status.code, span.attributes, span.parentSpanContext?.spanId]), [
      ['order.create', SpanStatusCode.UNSET, { 'order.id': job.order.id }, job.id],
      ['order.update_status', SpanStatusCode.UNSET, { 'order.id': job.order.id }, job.id],
      ['order.list', SpanStatusCode.UNSET, {}, job.id],
      ['order.list', SpanStatusCode.ERROR, { 'error.type': 'FST_ERR_VALIDATION' }, job.id],
      ['order.update_status', SpanStatusCode.ERROR, { 'error.type': 'ORDER_NOT_FOUND' }, job.id]
    ])
    const found = await collected()
    t.same(pointsOf(found.get('fastify_order.orders.created')), [[{}, 1]])
    t.same(pointsOf(found.get('fastify_order.feed.held_back')), [[{}, 0]], 'memory storage: nothing holds the feed back')
  })

  t.test('replicas: order.list spans say db.replica, pages are counted by target, each replica\'s lag is a gauge by host:port', async t => {
    const fake = fakeReplicaStorage()
    const { app } = await hostApp({ storage: fake.storage })
    t.teardown(() => app.close())
    finishedSpans()
    await collected()
    const order = await app.orders.create({ customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 1 }] })
    await app.inject({ method: 'POST', url: '/order/getOrderList', payload: {} })
    fake.settled.add('t1')
    await app.orders.list({})
    const lists = finishedSpans().filter(span => span.name === 'order.list')
    t.same(lists.map(span => span.attributes['db.replica']), [false, true], 'the route\'s page from the primary (its own write), then app.orders\' from the replica')
    const metrics = await collected()
    t.same(pointsOf(metrics.get('fastify_order.reads')).sort(), [[{ target: 'primary' }, 1], [{ target: 'replica' }, 1]])
    t.same(pointsOf(metrics.get('fastify_order.replica.lag')), [[{ replica: 'standby:5432' }, 1.5], [{ replica: 'standby-2:5432' }, 0]])
    t.ok(order.id)
  })

  t.test('a storage without subscriptions reports no lag, and the app still reports the rest', async t => {
    const { lease, readSubscription, checkpoint, release, recordOutcomes, readRedeliveries, listDeadLetters, redeliver, inspectSubscription, ...feedOnly } = memoryStorage()
    const { app } = await hostApp({ storage: feedOnly })
    t.teardown(() => app.close())
    await app.orders.create({ customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 100 }] })
    const found = await collected()
    t.same(pointsOf(found.get('fastify_order.subscription.lag')), [], 'no subscription, no lag')
    t.same(pointsOf(found.get('fastify_order.orders.created')), [[{}, 1]])
  })

  t.test('through a subscription: a span per handler call, each attempt counted by outcome and timed, the lag of the lease holder', async t => {
    const { app } = await hostApp()
    t.teardown(() => app.close())
    // The receiver refuses the first customer's orders every time.
    app.orders.subscribe('erp', async (event: OrderEvent) => {
      if (event.order.customerId === 'cus_refused') throw new codes.ORDER_STORAGE_UNAVAILABLE()
    }, { from: 'start', retry: { schedule: [1] }, pollInterval: 20, leaseTtl: 200 })
    await app.ready()
    const first = await app.orders.create({ customerId: 'cus_refused', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 100 }] })
    const second = await app.orders.create({ customerId: 'cus_secret', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 100 }] })
    const deadline = Date.now() + 10_000
    while (app.orders.subscriptions()[0]!.lastEventId === null || app.orders.subscriptions()[0]!.deadLetters < 1) {
      if (Date.now() > deadline) throw new Error('the subscription did not get through both events')
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    const deliveries = finishedSpans().filter(span => span.name === 'order.deliver')
    const byOrder = (a: ReadableSpan) => a.attributes['order.id'] === first.id ? 0 : 1
    t.same(deliveries.sort((a, b) => byOrder(a) - byOrder(b)).map(span => [span.kind, span.status.code, span.attributes]), [
      [SpanKind.CONSUMER, SpanStatusCode.ERROR, { 'order.subscription': 'erp', 'order.event.type': 'created', 'order.id': first.id, 'error.type': 'ORDER_STORAGE_UNAVAILABLE' }],
      [SpanKind.CONSUMER, SpanStatusCode.ERROR, { 'order.subscription': 'erp', 'order.event.type': 'created', 'order.id': first.id, 'error.type': 'ORDER_STORAGE_UNAVAILABLE' }],
      [SpanKind.CONSUMER, SpanStatusCode.UNSET, { 'order.subscription': 'erp', 'order.event.type': 'created', 'order.id': second.id }]
    ], 'two attempts of the first (then set aside), one of the second')
    const found = await collected()
    const outcomes = pointsOf(found.get('fastify_order.deliveries')) as Array<[{ outcome: string }, number]>
    t.same(outcomes.sort(([a], [b]) => a.outcome < b.outcome ? -1 : 1), [
      [{ 'order.subscription': 'erp', outcome: 'dead_lettered' }, 1],
      [{ 'order.subscription': 'erp', outcome: 'failed' }, 1],
      [{ 'order.subscription': 'erp', outcome: 'ok' }, 1]
    ])
    const durations = found.get('fastify_order.delivery.duration')!.dataPoints as Array<{ value: { count: number } }>
    t.equal(durations.reduce((sum, point) => sum + point.value.count, 0), 3, 'each handler call timed')
    t.same(pointsOf(found.get('fastify_order.subscription.lag')), [[{ 'order.subscription': 'erp' }, 0]], 'nothing left to handle')
  })
})

/** A host's app with the plugin; an onRequest hook stands for @fastify/otel's HTTP span. */
async function hostApp (options: OrderPluginOptions = {}): Promise<{ app: ReturnType<typeof Fastify>, http: string }> {
  const app = Fastify()
  app.addHook('onRequest', (_request, reply, done) => {
    const span = outside.startSpan('HTTP POST')
    reply.raw.once('finish', () => span.end())
    context.with(trace.setSpan(context.active(), span), done)
  })
  await app.register(orderPlugin, options)
  return { app, http: 'HTTP POST' }
}
