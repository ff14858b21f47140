// Starts a benchmark server on a free port and tells the parent process which one; the parent asks it
// for its CPU time with cpuTimeOf.
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import type { CreateOrderInput } from '../../lib/index.js'

export async function serve (app: FastifyInstance): Promise<void> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address')
  process.send!({ port: address.port })
  // CPU time per request is steadier than req/s when other work shares the machine.
  process.on('message', message => { if (message === 'cpu') process.send!({ cpu: process.cpuUsage() }) })
  // The parent ends the benchmark by closing the IPC channel.
  process.on('disconnect', () => { app.close().finally(() => process.exit(0)) })
}

/** The user + system CPU time so far, in microseconds, of a server process that `serve` runs in. */
export async function cpuTimeOf (child: ChildProcess): Promise<number> {
  const reply = once(child, 'message') as Promise<[{ cpu: NodeJS.CpuUsage }]>
  child.send('cpu')
  const [{ cpu }] = await reply
  return cpu.user + cpu.system
}

/**
 * Answers { seed: n } over IPC by creating n pending orders, `body(index)` each, and sending back their
 * ids: benchmarks whose every request changes an order of its own (bench/seeded-servers.ts) take one each.
 */
export function seedOnRequest (app: FastifyInstance, body: (index: number) => CreateOrderInput): void {
  process.on('message', async (message: { seed?: number }) => {
    if (message.seed === undefined) return
    const ids: string[] = []
    // 32 at a time: fast on every storage, and one create per statement on PostgreSQL.
    for (let made = 0; made < message.seed; made += 32) {
      const orders = await Promise.all(Array.from({ length: Math.min(32, message.seed - made) }, (_, index) => app.orders.create(body(made + index))))
      ids.push(...orders.map(order => order.id))
    }
    process.send!({ ids })
  })
}
