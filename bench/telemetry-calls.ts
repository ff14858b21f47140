// Nanoseconds per telemetry call under the telemetry of BENCH_TELEMETRY (see servers/telemetry-mode.ts), each
// call timed over many and less the same work without it. Run by bench/telemetry.ts, one process per mode.
import { telemetryMode } from './servers/telemetry-mode.js'
import { libraryDir } from './storages.js'

const { loadTelemetry } = await import(new URL('telemetry/telemetry.js', libraryDir).href) as typeof import('../lib/telemetry/telemetry.js')
const telemetry = await loadTelemetry()
const calls = process.argv.includes('--quick') ? 100_000 : 1_000_000
const event = { type: 'created', order: { id: 'ord_1' } }

const operation = async (span: { setOrderId: (id: string) => void }) => {
  span.setOrderId('ord_1')
  return 1
}
const handler = async () => 1
const handle = () => 1

/** Nanoseconds per call of `run`, the best of three passes. */
async function timed (run: () => unknown): Promise<number> {
  let best = Infinity
  for (let pass = 0; pass < 3; pass++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) await run()
    best = Math.min(best, Number(process.hrtime.bigint() - start) / calls)
  }
  return best
}

const bare = await timed(() => operation({ setOrderId () {} }))
const results = {
  'span(): an app.orders call': await timed(() => telemetry.span('order.create', operation)) - bare,
  'startSpan, withSpan, setOrderId, end: a route': await timed(() => {
    const span = telemetry.startSpan('order.update_status')
    telemetry.withSpan(span, handle)
    span.setOrderId('ord_1')
    span.end()
  }) - await timed(handle),
  'created() and statusChanged()': await timed(() => {
    telemetry.created()
    telemetry.statusChanged('pending', 'paid')
  }) - await timed(handle),
  'deliver() and delivered(): a handler call': await timed(async () => {
    await telemetry.deliver('bench', event, handler)
    telemetry.delivered('bench', 'ok', 0.01)
  }) - await timed(handler)
}
process.send!({ mode: telemetryMode, results })
