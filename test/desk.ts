// The desk's tests in one process: the serving routes, and the page in one headless Chromium shared by every browser file.
import { runFolder } from './run-folder.js'

await runFolder(new URL('desk/', import.meta.url))
