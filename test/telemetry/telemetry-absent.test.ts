// Without @opentelemetry/api installed (an optional peer dependency), the plugin serves as before.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import t from 'tap'

t.test('an app without @opentelemetry/api serves the three routes, and answers a bad body with 400', async t => {
  // fork keeps the test runner's TypeScript loader (and its coverage); the hook hides the package.
  const child = fork(new URL('../fixtures/app-without-opentelemetry.ts', import.meta.url), [], {
    execArgv: [...process.execArgv, '--import', new URL('../fixtures/hide-opentelemetry.mjs', import.meta.url).href],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const [answer] = await once(child, 'message') as [{ statuses: number[], listedIds: string[], id: string }]
  t.same(answer.statuses, [201, 200, 200, 400])
  t.same(answer.listedIds, [answer.id])
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
})
