// Sets this process up as BENCH_TELEMETRY says: `none`, no @opentelemetry/api to import; `api`, the API
// and no SDK; `sdk`, an SDK whose exporters drop everything (spans batched, metrics read every 10 s);
// `sdk-silent`, the same SDK started after the plugin registered (see afterRegister).
import { register } from 'node:module'

export type TelemetryMode = 'none' | 'api' | 'sdk' | 'sdk-silent'
export const telemetryMode = (process.env.BENCH_TELEMETRY ?? 'none') as TelemetryMode

if (telemetryMode === 'none') register(new URL('./hide-opentelemetry.mjs', import.meta.url))

async function startSdk (): Promise<void> {
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

if (telemetryMode === 'sdk') await startSdk()

/**
 * For `sdk-silent`: the SDK, started once the plugin has registered, so the plugin reports nothing,
 * with its context manager in use, as a host's own instrumentation (or the span processor's first
 * export) puts it. On Node.js 20 and 22 that manager's AsyncLocalStorage hooks every promise of the
 * process: a price of the SDK, which this mode shows apart from the plugin's own.
 */
export async function afterRegister (): Promise<void> {
  if (telemetryMode !== 'sdk-silent') return
  await startSdk()
  const { context } = await import('@opentelemetry/api')
  context.with(context.active(), () => {})
}
