// Swagger UI of the example server in a real headless Chromium: / leads there, the answers show their examples, and "Try it out" works from localhost.
import { existsSync } from 'node:fs'
import t from 'tap'
import { chromium, type Page } from 'playwright-core'
import { buildServer } from '../examples/server.js'
import { exampleMemoryStorage } from './helper.js'

// Debian's package (.ci/run installs it when missing); CHROMIUM_PATH names another build.
const executablePath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(path => path !== undefined && existsSync(path))
const skip = executablePath === undefined ? 'Chromium is not installed: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH' : false

// A browser start and three round trips through Swagger UI, on a busy machine.
t.setTimeout(120_000)

/** Opens an operation, presses "Try it out", puts `body` in the editor when given, presses Execute; returns the answer shown. */
async function tryItOut (page: Page, operationId: string, body?: object): Promise<{ status: string, json: unknown }> {
  const operation = page.locator(`#operations-orders-${operationId}`)
  await operation.locator('.opblock-summary').click()
  await operation.locator('.try-out__btn').click()
  if (body !== undefined) await operation.locator('textarea.body-param__text').fill(JSON.stringify(body))
  await operation.locator('.execute').click()
  const answer = operation.locator('.live-responses-table .response')
  await answer.waitFor()
  // A request that never reached the server shows "Failed to fetch" (CORS, a wrong address) instead of a body.
  const shown = (await answer.locator('.response-col_description').innerText()).trim()
  const json = answer.locator('.response-col_description pre.microlight')
  return {
    status: `${(await answer.locator('.response-col_status').innerText()).trim()} ${await json.count() === 0 ? shown : ''}`.trim(),
    json: await json.count() === 0 ? undefined : JSON.parse(await json.first().innerText())
  }
}

t.test('from http://localhost, / leads to Swagger UI, which shows the documented answers and whose "Try it out" creates, moves and lists an order', { skip }, async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  // Opened at another name than the one the server listens at: the document's server is relative, so no request crosses origins.
  const origin = `http://localhost:${(app.server.address() as { port: number }).port}`

  // Running as root (CI containers) needs --no-sandbox.
  const browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  await page.goto(`${origin}/`)
  t.match(page.url(), `${origin}/docs`, '/ leads to the docs')

  const created = await tryItOut(page, 'createOrder')
  t.equal(created.status, '201', 'createOrder with its example')
  const { id } = created.json as { id: string }

  const move = page.locator('#operations-orders-updateOrderStatus')
  await move.locator('.opblock-summary').click()
  t.match(await move.innerText(), 'put the id createOrder answered', 'the move says where its id comes from')
  // Under Responses, the documented examples rather than values made up from the schemas.
  const documented = async (code: string) => await move.locator(`.responses-wrapper tr.response[data-code="${code}"]`).innerText()
  t.match(await documented('200'), /"customerId": "cus_42"[\s\S]*"status": "paid"/, 'the moved order\'s example is shown')
  t.match(await documented('404'), /"statusCode": 404,\s*"code": "ORDER_NOT_FOUND",\s*"error": "Not Found"/, 'an error is shown with its status and code')
  t.match(await documented('409'), 'ORDER_INVALID_TRANSITION', 'a 409 with its first code')
  t.notMatch(await documented('409'), '"code": "string"', 'not a placeholder')
  await move.locator('.opblock-summary').click()
  const moved = await tryItOut(page, 'updateOrderStatus', { id, status: 'paid', expectedVersion: 1 })
  t.equal(moved.status, '200', 'updateOrderStatus of the order just created')
  t.match(moved.json, { id, status: 'paid', version: 2 })

  const listed = await tryItOut(page, 'getOrderList')
  t.equal(listed.status, '200', 'getOrderList with its example')
  t.match(listed.json, { items: [{ id, status: 'paid' }] })
})
