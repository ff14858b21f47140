// The example server turns the desk on: `npm start`, then /order/desk.
import t from 'tap'
import { buildServer } from '../../examples/server.js'
import { exampleMemoryStorage } from '../helper.js'

t.test('the example server serves the desk at /order/desk, with changeOrder for its change dialog', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const page = await app.inject({ method: 'GET', url: '/order/desk' })
  t.equal(page.statusCode, 200)
  t.match(page.body, '<h1 id="desk-title">Orders</h1>')
  t.equal((await app.inject({ method: 'GET', url: '/order/desk/config.json' })).json().changes, true)
})
