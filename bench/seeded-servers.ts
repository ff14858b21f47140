// Benchmark servers seeded with pending orders, and loads of a fixed number of requests timed to their
// last answer: for scenarios whose every request changes an order of its own (a move from pending, a change).
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { cpuTimeOf } from './servers/serve.js'

export interface SeededServer {
  name: string
  url: string
  child: ChildProcess
  /** The pending orders it created at start, none changed yet: each request takes one. */
  ids: string[]
}

/** A program the server runs under, and its arguments before Node.js's: valgrind, say. */
export interface Wrapper {
  command: string
  args: string[]
}

/**
 * Starts bench/servers/<file> (which answers { seed } as seedOnRequest does, when `orders` is more than
 * 0) and has it create `orders` pending orders; under `wrapper` when given.
 */
export async function startSeeded (name: string, file: string, env: Record<string, string>, orders: number, wrapper?: Wrapper): Promise<SeededServer> {
  const node = ['--import', 'tsx']
  const child = fork(join(import.meta.dirname, 'servers', file), [], {
    ...wrapper === undefined ? { execArgv: node } : { execPath: wrapper.command, execArgv: [...wrapper.args, process.execPath, ...node] },
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  // A server that fails to start (an option its build does not know, a database that does not answer) exits.
  const exited = once(child, 'exit').then(([code]) => { throw new Error(`${name} server exited with ${code} before it was seeded`) })
  const [{ port }] = await Promise.race([once(child, 'message') as Promise<[{ port: number }]>, exited])
  const url = `http://127.0.0.1:${port}`
  if (orders === 0) return { name, url, child, ids: [] }
  const seeded = once(child, 'message') as Promise<[{ ids: string[] }]>
  child.send({ seed: orders })
  const [{ ids }] = await Promise.race([seeded, exited])
  return { name, url, child, ids }
}

export async function stopSeeded (server: SeededServer): Promise<void> {
  const exited = once(server.child, 'exit')
  server.child.disconnect()
  await exited
}

export interface Load {
  rate: number
  /** Server CPU microseconds per request: steadier than req/s when other work shares the machine. */
  cpu: number
}

/** Requests per second of `amount` POSTs to `/order/<route>`, each with the body `body()` makes, and their CPU cost. */
export async function loadRequests (server: SeededServer, route: string, amount: number, body: () => object): Promise<Load> {
  const cpuBefore = await cpuTimeOf(server.child)
  const started = performance.now()
  let answered = started
  let finish!: (result: autocannon.Result) => void
  let fail!: (err: unknown) => void
  const done = new Promise<autocannon.Result>((resolve, reject) => { finish = resolve; fail = reject })
  const run = autocannon({
    url: `${server.url}/order/${route}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections: 10,
    amount,
    requests: [{ setupRequest: request => ({ ...request, body: JSON.stringify(body()) }) }]
  }, (err, result) => { if (err !== null && err !== undefined) fail(err); else finish(result) })
  // autocannon ends a run at its next one-second tick: the last answer marks the end of the work.
  run.on('response', () => { answered = performance.now() })
  const result = await done
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) throw new Error(`${server.name} ${route}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`)
  const rate = result.requests.total / ((answered - started) / 1000)
  return { rate, cpu: (await cpuTimeOf(server.child) - cpuBefore) / result.requests.total }
}
