// The tests of subscriptions, the relay and webhook addresses (test/subscriptions/), all in this one process.
// Those that need a server (NATS, MySQL) say they skipped without one. `npx tap <file>` runs one alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('subscriptions/', import.meta.url))
