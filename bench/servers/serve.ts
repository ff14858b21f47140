// Starts a benchmark server on a free port and tells the parent process which one; the parent asks it
// for its CPU time with cpuTimeOf.
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'

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
