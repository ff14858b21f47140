// The route tests, test/routes/*.test.ts, found by name and run in the process that imports them: on
// memory storage by test/routes.test.ts, on PostgreSQL by test/routes.postgres.ts. One process for all
// of them starts Node.js, the plugin and the database once instead of once per file.
import { readdirSync } from 'node:fs'
import t from 'tap'

export async function runRouteTests (): Promise<void> {
  // Every route file's tests, one after another, in this one test file.
  t.setTimeout(900_000)
  const folder = new URL('routes/', import.meta.url)
  for (const file of readdirSync(folder).filter(name => name.endsWith('.test.ts')).sort()) {
    await import(new URL(file, folder).href)
  }
}
