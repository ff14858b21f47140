// The telemetry tests (test/telemetry/), all in this one process. `npx tap <file>` runs one alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('telemetry/', import.meta.url))
