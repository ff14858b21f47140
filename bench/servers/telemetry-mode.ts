// Sets this process up as BENCH_TELEMETRY says: `none`, no @opentelemetry/api to import; `api`, the API
// and no SDK; `sdk`, an SDK whose exporters drop everything (spans batched, metrics read every 10 s).
import { register } from 'node:module'

export type TelemetryMode = 'none' | 'api' | 'sdk'
export const telemetryMode = (process.env.BENCH_TELEMETRY ?? 'none') as TelemetryMode

if (telemetryMode === 'none') register(new URL('./hide-opentelemetry.mjs', import.meta.url))
if (telemetryMode === 'sdk') {
  const { context, metrics, trace } = await import('@opentelemetry/api')
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks')
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base')
  const { MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics')
  const success = { code: 0 }
  const drop = { export: (_items: unknown, done: (result: typeof success) => void) => done(success), shutdown: async () => {}, forceFlush: async () => {} }
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(drop)] }))
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: drop, exportIntervalMillis: 10_000 })] }))
}
