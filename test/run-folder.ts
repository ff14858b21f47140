// Runs every test file of one or more folders in the process that imports them, one after another: Node.js,
// the test runner's TypeScript loader, the plugin and the database start once rather than once per file, and
// a new file in the folder runs without being listed anywhere. Every folder of test/ runs this way (see
// .taprc); `npx tap <file>` still runs one file alone.
import { readdirSync } from 'node:fs'
import t from 'tap'

export async function runFolder (...folders: URL[]): Promise<void> {
  // The folder's time, whatever a file asked for when it runs alone.
  t.setTimeout(900_000)
  const loading = (async () => {
    for (const folder of folders) {
      for (const file of readdirSync(folder).filter(name => name.endsWith('.test.ts')).sort()) {
        await import(new URL(file, folder).href)
      }
    }
  })()
  // The root test holds its queue until every file is loaded. A file that awaits at its top (a database's
  // start) would otherwise leave the root with nothing to run after the earlier files' tests, and a root
  // with a teardown ends itself once idle: the later files' tests would come after its end.
  await t.waitOn(loading)
}
