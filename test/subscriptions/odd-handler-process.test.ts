// A process whose handler throws odd values keeps running: every event retried, set aside, and the process ends on its own.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import t from 'tap'
import { describeFailure } from '../../lib/feed/describe-failure.js'
import { uncoveredChild } from '../helper.js'
import { oddFailures } from '../feed/odd-failures.js'

t.test('a handler throwing values that describe themselves badly crashes no process: each is dead-lettered and the app closes', async t => {
  // Through tsx, out of the coverage: the tests in process cover what the handler's process runs.
  const child = fork(new URL('../fixtures/odd-handler.ts', import.meta.url), [], { ...uncoveredChild(), stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'the process ends by itself, without an unhandled rejection')
  t.same(JSON.parse(output), oddFailures().map(([, thrown]) => ({ attempts: 3, error: describeFailure(thrown) })))
})
