// Telemetry: spans and metrics through the host's OpenTelemetry setup when @opentelemetry/api is installed, nothing otherwise.
import { createRequire } from 'node:module'
import type * as OpenTelemetry from '@opentelemetry/api'
import { failureType } from '../feed/describe-failure.js'

type Api = typeof OpenTelemetry

/** The span of each `app.orders` call and each route. */
export type OperationSpanName = 'order.create' | 'order.list' | 'order.update_status' | 'order.change'

/** How one handler call of a subscription ended: handled, failed with a retry to come, or failed and set aside. */
export type DeliveryOutcome = 'ok' | 'failed' | 'dead_lettered'

/** An operation's span. The one attribute it takes is the id of the order concerned: nothing a client wrote. */
export interface OperationSpan {
  setOrderId: (id: string) => void
}

/** A route's span, started at body validation and ended at the response. */
export interface RouteSpan extends OperationSpan {
  /** Marks the request failed: status ERROR, `error.type` the error's code. */
  fail: (error: unknown) => void
  /** Ends the span; a second call does nothing (a handler that ended it, then an onError hook). */
  end: () => void
}

/** What a delivery span tells of the event handled. */
export interface DeliveredEvent {
  type: string
  order: { id: string }
}

/** A subscription's lag, as `subscriptions()` counts it. */
export interface SubscriptionLag {
  subscription: string
  events: number
}

export interface Telemetry {
  /** Whether the host registered a tracer provider (an SDK): without one, no span is made, so routes need no hooks for them. */
  readonly tracing: boolean
  /** Runs `run` in a span `name`, child of the active span; a throw or rejection marks it failed and is passed on. */
  span: <T>(name: OperationSpanName, run: (span: OperationSpan) => Promise<T>) => Promise<T>
  /** Starts a route's span, child of the active span; the route ends it. */
  startSpan: (name: OperationSpanName) => RouteSpan
  /** Runs `run` with `span` active, so what it starts (and what `run` calls back, such as Fastify's `done`) is its child. */
  withSpan: <T>(span: RouteSpan, run: () => T) => T
  /** Runs one handler call of subscription `subscription` in an `order.deliver` span of its own trace. */
  deliver: <T>(subscription: string, event: DeliveredEvent, run: () => Promise<T>) => Promise<T>
  /** An order was created (its change committed). */
  created: () => void
  /** An order moved from `from` to `to` (its change committed). */
  statusChanged: (from: string, to: string) => void
  /** One handler call of `subscription` ended with `outcome` after `seconds`. */
  delivered: (subscription: string, outcome: DeliveryOutcome, seconds: number) => void
  /** Reports each subscription's lag when the metrics are collected. */
  observeLag: (read: () => Iterable<SubscriptionLag> | Promise<Iterable<SubscriptionLag>>) => void
  /** Reports how long the feed is held back, in seconds, when the metrics are collected. */
  observeHeldBack: (read: () => number | Promise<number>) => void
  /** A page was read from a replica (`true`) or the primary: counted, and told to the active span. */
  read: (replica: boolean) => void
  /** Reports each replica's lag when the metrics are collected. */
  observeReplicaLag: (read: () => Iterable<{ name: string, lagMs: number }>) => void
  /** Stops the reports of `observeLag`, `observeHeldBack` and `observeReplicaLag`. */
  close: () => void
}

const NAME = 'fastify-order'

const noSpan: RouteSpan = Object.freeze({ setOrderId () {}, fail () {}, end () {} })

/** Telemetry without @opentelemetry/api: every call costs a function call and nothing more. */
export const noTelemetry: Telemetry = Object.freeze({
  tracing: false,
  span: (_name, run) => run(noSpan),
  startSpan: () => noSpan,
  withSpan: (_span, run) => run(),
  deliver: (_subscription, _event, run) => run(),
  created () {},
  statusChanged () {},
  delivered () {},
  observeLag () {},
  observeHeldBack () {},
  read () {},
  observeReplicaLag () {},
  close () {}
} satisfies Telemetry)

/** A span the host's SDK records. */
class RecordedSpan implements RouteSpan {
  private ended = false

  constructor (readonly span: OpenTelemetry.Span, private readonly error: OpenTelemetry.SpanStatusCode) {}

  setOrderId (id: string): void {
    this.span.setAttribute('order.id', id)
  }

  fail (error: unknown): void {
    this.span.setStatus({ code: this.error })
    this.span.setAttribute('error.type', failureType(error))
  }

  end (): void {
    if (this.ended) return
    this.ended = true
    this.span.end()
  }
}

/** Runs `run` in `span` (a delivery's run takes no argument and ignores it), ending the span after it. */
async function runIn<T> (run: (span: OperationSpan) => Promise<T>, span: RecordedSpan): Promise<T> {
  let result: T
  try {
    result = await run(span)
  } catch (err) {
    span.fail(err)
    span.end()
    throw err
  }
  span.end()
  return result
}

// From 5 ms to a minute: a webhook receiver typically answers in 20 to 500 ms.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60]

function telemetryOf (api: Api, tracing: boolean): Telemetry {
  const { context, trace, SpanKind, SpanStatusCode } = api
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string }
  // The meter is the one registered now (the API has no proxy for it), so the SDK starts before the plugin.
  const tracer = trace.getTracer(NAME, version)
  const meter = api.metrics.getMeter(NAME, version)

  const created = meter.createCounter('fastify_order.orders.created', { description: 'Orders created', unit: '{order}' })
  const statusChanged = meter.createCounter('fastify_order.orders.status_changed', { description: 'Orders moved from one status to another', unit: '{order}' })
  const deliveries = meter.createCounter('fastify_order.deliveries', { description: 'Handler calls of subscriptions, each attempt counted', unit: '{delivery}' })
  const duration = meter.createHistogram('fastify_order.delivery.duration', {
    description: 'How long one handler call of a subscription took',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS }
  })
  const lag = meter.createObservableGauge('fastify_order.subscription.lag', {
    description: 'Listed events a subscription has not handled yet, reported by the instance holding its lease',
    unit: '{event}'
  })
  const heldBack = meter.createObservableGauge('fastify_order.feed.held_back', {
    description: 'How long the oldest open transaction has held the event feed back',
    unit: 's'
  })
  const reads = meter.createCounter('fastify_order.reads', { description: 'Pages read, by where: the primary or a replica', unit: '{page}' })
  const replicaLag = meter.createObservableGauge('fastify_order.replica.lag', {
    description: 'How far a replica is behind the primary: the time since the primary was at the position it has replayed',
    unit: 's'
  })
  const observers: Array<[OpenTelemetry.ObservableGauge, OpenTelemetry.ObservableCallback]> = []
  function observe (gauge: OpenTelemetry.ObservableGauge, callback: OpenTelemetry.ObservableCallback): void {
    gauge.addCallback(callback)
    observers.push([gauge, callback])
  }

  return {
    tracing,
    span (name, run) {
      const span = tracer.startSpan(name)
      // Without an SDK (or sampled out) nothing is recorded: no context to make, nothing to end.
      if (!span.isRecording()) return run(noSpan)
      return context.with(trace.setSpan(context.active(), span), runIn<any>, undefined, run, new RecordedSpan(span, SpanStatusCode.ERROR))
    },
    startSpan (name) {
      const span = tracer.startSpan(name)
      return span.isRecording() ? new RecordedSpan(span, SpanStatusCode.ERROR) : noSpan
    },
    withSpan (span, run) {
      // Already active (the route's hooks made it so, and nothing since has replaced it): no new context.
      if (!(span instanceof RecordedSpan) || trace.getSpan(context.active()) === span.span) return run()
      return context.with(trace.setSpan(context.active(), span.span), run)
    },
    deliver (subscription, event, run) {
      // A trace of its own: the runner's loop may have started inside a request, whose trace would
      // otherwise gather every delivery for as long as the app runs.
      const span = tracer.startSpan('order.deliver', {
        kind: SpanKind.CONSUMER,
        root: true,
        attributes: { 'order.subscription': subscription, 'order.event.type': event.type, 'order.id': event.order.id }
      })
      if (!span.isRecording()) return run()
      return context.with(trace.setSpan(context.active(), span), runIn<any>, undefined, run, new RecordedSpan(span, SpanStatusCode.ERROR))
    },
    created () {
      created.add(1)
    },
    statusChanged (from, to) {
      statusChanged.add(1, { 'order.status.from': from, 'order.status.to': to })
    },
    delivered (subscription, outcome, seconds) {
      const attributes = { 'order.subscription': subscription, outcome }
      deliveries.add(1, attributes)
      duration.record(seconds, attributes)
    },
    observeLag (read) {
      observe(lag, async result => {
        // A storage that cannot be read reports nothing this time; the subscription logs the failure.
        try {
          for (const { subscription, events } of await read()) result.observe(events, { 'order.subscription': subscription })
        } catch {}
      })
    },
    observeHeldBack (read) {
      observe(heldBack, async result => {
        try {
          result.observe(await read())
        } catch {}
      })
    },
    read (replica) {
      reads.add(1, { target: replica ? 'replica' : 'primary' })
      // The page's span (a route's, or app.orders.list's) is the active one.
      if (tracing) trace.getActiveSpan()?.setAttribute('db.replica', replica)
    },
    observeReplicaLag (read) {
      observe(replicaLag, result => {
        for (const { name, lagMs } of read()) result.observe(lagMs / 1000, { replica: name })
      })
    },
    close () {
      for (const [gauge, callback] of observers.splice(0)) gauge.removeCallback(callback)
    }
  }
}

/**
 * The plugin's telemetry: through @opentelemetry/api when it is installed (an optional peer
 * dependency: the host's SDK, if any, records), else `noTelemetry`. `load` imports the API; tests
 * give another.
 */
export async function loadTelemetry (load: () => Promise<unknown> = () => import('@opentelemetry/api')): Promise<Telemetry> {
  let api: Api
  try {
    api = await load() as Api
  } catch {
    return noTelemetry
  }
  // Metrics came to the API in 1.3: an older one is as good as none.
  if (typeof api?.metrics?.getMeter !== 'function') return noTelemetry
  // What the host has registered by now: the SDK starts before the app, so that with the API and no
  // SDK the plugin costs what it costs without the API.
  const provider = api.trace.getTracerProvider() as Partial<OpenTelemetry.ProxyTracerProvider>
  const tracing = typeof provider.getDelegate !== 'function' || provider.getDelegate() !== new api.ProxyTracerProvider().getDelegate()
  const metering = api.metrics.getMeterProvider().getMeter(NAME).constructor !== api.createNoopMeter().constructor
  return tracing || metering ? telemetryOf(api, tracing) : noTelemetry
}
