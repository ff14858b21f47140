// The order rules' own tests (test/orders/), all in this one process. `npx tap <file>` runs one alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('orders/', import.meta.url))
