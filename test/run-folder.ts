// Runs every test file of a folder in the process that imports it, one after another: Node.js, the plugin
// and the database start once rather than once per file, and a new file in the folder runs without being
// listed anywhere. The route tests (test/routes/, once per storage) and the tests of each SQL storage
// (test/storage/postgres/, test/storage/mysql/) run this way; `npx tap <file>` still runs one file alone.
import { readdirSync } from 'node:fs'
import t from 'tap'

export async function runFolder (folder: URL): Promise<void> {
  // The folder's tests, all in this one test file.
  t.setTimeout(900_000)
  for (const file of readdirSync(folder).filter(name => name.endsWith('.test.ts')).sort()) {
    await import(new URL(file, folder).href)
  }
}
