// CPU time of PostgreSQL backends by application_name, from /proc: the database's share of a request when it runs here.
import { readFileSync } from 'node:fs'
import { openClient } from './storages.js'

export interface BackendCpu {
  /** Microseconds of CPU the connections named `applicationName` have used so far; undefined when /proc cannot tell. */
  cpu: (applicationName: string) => Promise<number | undefined>
  close: () => Promise<void>
}

export async function openBackendCpu (): Promise<BackendCpu> {
  const { client, close } = await openClient('postgres', 'fastify-order-bench-monitor')
  return {
    async cpu (applicationName) {
      const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName])
      if (rows.length === 0) return undefined
      let total = 0
      for (const { pid } of rows) {
        try {
          // A server in another container or on another machine has no such process here, or another one.
          if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') return undefined
          total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000
        } catch {
          return undefined
        }
      }
      return total
    },
    close
  }
}
