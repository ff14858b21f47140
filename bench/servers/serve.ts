// Starts a benchmark server on a free port and tells the parent process which one.
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
