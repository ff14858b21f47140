// The HTTP layer's own tests (test/http/): validation, OpenAPI. All in this one process; `npx tap <file>` runs one alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('http/', import.meta.url))
