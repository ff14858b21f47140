// The README and the guides it links cannot rot: their TypeScript runs, their curl calls replay against the
// example server, their links lead somewhere, the README's tables match the code.
import type { AddressInfo } from 'node:net'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { exampleMemoryStorage, uncoveredChild } from './helper.js'
import { buildServer } from '../examples/server.js'
import { codes, CreateOrderBodySchema, defaultWorkflow, ListOrdersBodySchema, UpdateOrderStatusBodySchema, workflowDiagram } from '../lib/index.js'
import { webhook } from '../lib/subscriptions/webhooks.js'

// Type-checking the snippets runs a compiler over three programs, which takes a while on a busy machine.
t.setTimeout(120_000)

const root = fileURLToPath(new URL('..', import.meta.url))
/** The README, the contributors' guide and every guide in docs/, by path from the root. */
const documents = new Map(['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]
  .map(path => [path, readFileSync(join(root, path), 'utf8')]))
const readme = documents.get('README.md')!
const blocksOf = (text: string) => [...text.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, code]) => ({ lang: lang!, code: code! }))
const blocks = [...documents.values()].flatMap(blocksOf)

/** Marks the lines in which the snippets' process says how each ran, among what the snippets print. */
const RAN = 'snippet ran: '

t.test('every TypeScript snippet of the README and the guides type-checks and runs', async t => {
  const snippets = blocks.filter(block => block.lang === 'ts').map(block => block.code)
  t.ok(blocksOf(readme).filter(block => block.lang === 'ts').length >= 5, 'the README shows how to use the plugin in TypeScript')

  // Inside the repository, so the snippets find its node_modules, and 'fastify-order' resolves to this
  // package itself, through its exports, to the build in dist/ (npm test builds first): the snippets
  // are type-checked and run exactly as written, against what users install.
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  if (!existsSync(join(root, 'dist', 'index.js'))) await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root })
  const folder = mkdtempSync(join(root, 'test', '.readme-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  // A snippet that declares custom field types augments 'fastify-order' for a whole program, so it
  // is type-checked in a program of its own; the others share one.
  const programs = new Map<string, string[]>()
  const files = snippets.map((code, index) => {
    const name = `snippet-${index + 1}.ts`
    writeFileSync(join(folder, name), code)
    const program = code.includes("declare module 'fastify-order'") ? `tsconfig.${name}.json` : 'tsconfig.json'
    programs.set(program, [...programs.get(program) ?? [], name])
    return join(folder, name)
  })
  for (const [program, names] of programs) {
    writeFileSync(join(folder, program), JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { noEmit: true, rootDir: '../..', tsBuildInfoFile: `${program}.tsbuildinfo` },
      files: names,
      include: []
    }))
  }
  // One compiler run for all the programs (-b): they share what they read, such as fastify's declarations.
  // TypeScript 7's native compiler (tsgo), as users on that line compile; the host apps (npm run test:hosts)
  // check the build with 5.9. Not under test, it runs out of the coverage (uncoveredChild's environment),
  // from its bin's module, lib/tsgo.js: the bin, a file without an extension, fails under the loaders tap adds.
  const { execArgv, env } = uncoveredChild()
  const tsgo = join(root, 'node_modules', '@typescript', 'native-preview', 'lib', 'tsgo.js')
  const checked = await promisify(execFile)(process.execPath, [tsgo, '-b', ...[...programs.keys()].map(program => join(folder, program))], { env })
    .then(() => ({ code: 0, stdout: '' }), (error: { code: number, stdout: string }) => error)
  t.equal(checked.code, 0, `the snippets type-check: ${checked.stdout}`)

  // Run one after another in a process of their own, as a user's program is: what they import is the build
  // in dist/, whose own source maps lead into lib/ by other paths than the tests' transpiler does, so tap
  // is told to leave that process out of the coverage, which measures lib/ through the tests.
  const runner = `for (const file of process.argv.slice(1)) {
    const error = await import(file).then(() => undefined, error => String(error?.stack ?? error))
    console.log('${RAN}' + JSON.stringify({ file, error }))
  }
  process.exit(0)`
  const { stdout } = await promisify(execFile)(process.execPath, [...execArgv, '--input-type=module', '--eval', runner, ...files.map(file => pathToFileURL(file).href)], { cwd: root, env })
  const ran = new Map(stdout.split('\n').filter(line => line.startsWith(RAN)).map(line => JSON.parse(line.slice(RAN.length)) as { file: string, error?: string })
    .map(({ file, error }) => [fileURLToPath(file), error]))
  for (const file of files) {
    t.ok(ran.has(file) && ran.get(file) === undefined, `${file.slice(root.length)} runs${ran.get(file) === undefined ? '' : `: ${ran.get(file)}`}`)
  }
})

// Fields the server chooses at run time; the README shows the values of one real run.
const chosen = new Set(['id', 'at', 'createdAt', 'updatedAt', 'nextCursor'])

/** `shown` with every server-chosen value replaced by the real one, remembering the pairs. */
function align (shown: unknown, real: unknown, seen: Map<string, string>): unknown {
  if (typeof shown !== 'object' || shown === null || typeof real !== 'object' || real === null) return shown
  const aligned: Record<string, unknown> = Array.isArray(shown) ? [] as never : {}
  for (const [key, value] of Object.entries(shown)) {
    const actual = (real as Record<string, unknown>)[key]
    if (chosen.has(key) && typeof value === 'string' && typeof actual === 'string') {
      seen.set(value, actual)
      aligned[key] = actual
    } else {
      aligned[key] = align(value, actual, seen)
    }
  }
  return aligned
}

/**
 * Runs the shell blocks of one document that call curl, as written, in order and in one shell (so a
 * variable one sets, another reads), against a fresh example server, `times` times over in that shell;
 * each block of the first run must print the answer shown after it. Only the address changes, to the
 * server's. Returns the outputs of each run, one per block.
 */
async function replayCurls (t: Test, blocks: Array<{ lang: string, code: string }>, times = 1): Promise<Array<Array<{ value: unknown, text: string }>>> {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })

  const calls = blocks.flatMap((block, index) => block.lang === 'sh' && /\bcurl /.test(block.code) ? [{ code: block.code, answer: blocks[index + 1]! }] : [])
  for (const { code } of calls) t.notMatch(code, /:3000\//, 'each call reaches the server at the PORT the reader set')
  // A NUL after each block's output tells the outputs apart; -eu stops at the first failing command or unset variable.
  // The calls run as pasted, in a shell where PORT is the server's.
  const script = `PORT=${(app.server.address() as AddressInfo).port}\n` + calls.map(({ code }) => `${code}\nprintf '\\0'\n`).join('').repeat(times)
  const ran = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script])
    .then(({ stdout }) => ({ code: 0, stdout, stderr: '' }), (error: { code: number, stdout: string, stderr: string }) => error)
  t.equal(ran.code, 0, `the calls run: ${ran.stderr}`)

  const texts = ran.stdout.split('\0').slice(0, calls.length * times)
  const outputs = texts.map(output => {
    try {
      return JSON.parse(output) as unknown
    } catch {
      return output
    }
  })
  const seen = new Map<string, string>()
  const replace = (text: string) => [...seen].reduce((result, [shown, real]) => result.replaceAll(shown, real), text)
  for (const [index, { code, answer }] of calls.entries()) {
    t.equal(answer.lang, 'json', 'each curl call is followed by its answer')
    const real = outputs[index]
    const shown = align(JSON.parse(replace(answer.code)), real, seen)
    t.same(real, shown, code)
    // As the command prints it: the same keys in the same order, on lines as printed.
    t.equal(JSON.stringify(shown), JSON.stringify(real), `${code}: shown in the order printed`)
    if (!/\$\(curl /.test(code)) t.match(texts[index], /\n$/, `${code}: ends its line, as -w '\\n' makes it`)
  }
  const printed = outputs.map((value, index) => ({ value, text: texts[index]! }))
  return Array.from({ length: times }, (_, run) => printed.slice(run * calls.length, (run + 1) * calls.length))
}

t.test('every curl call of the README and the guides answers what they show', async t => {
  t.ok((await replayCurls(t, blocksOf(documents.get('docs/http.md')!)))[0]!.length >= 8, 'the HTTP guide walks through every case')
  t.equal((await replayCurls(t, blocksOf(documents.get('docs/changes.md')!)))[0]!.length, 11,
    'the changes guide walks through an edit, a payment sent twice, a return, its refund and the balance filter')
})

t.test('the README\'s walk-through works as shown, and pasted a second time into the same shell it works again', async t => {
  type Order = { id: string, status: string, version: number, balance: number }
  type Run = [Order, Order, { items: Order[] }, Order]
  const printed = await replayCurls(t, blocksOf(readme), 2)
  const runs = printed.map(run => run.map(({ value }) => value)) as Run[]
  t.equal(runs[0]!.length, 4, 'the README shows each route once')
  const [[first], [created, paid, page, settled]] = runs as [Run, Run]
  // Shown as printed: each answer on one line, which ends.
  const shown = blocksOf(readme).filter(({ lang }, index, blocks) => lang === 'json' && /\bcurl /.test(blocks[index - 1]?.code ?? ''))
  for (const [index, { value, text }] of printed[0]!.entries()) {
    t.equal(text, `${JSON.stringify(value)}\n`, 'each answer prints on one line, ending it')
    t.equal(shown[index]!.code, `${JSON.stringify(JSON.parse(shown[index]!.code))}\n`, 'and the README shows it on one line')
  }
  t.not(created.id, first.id, 'the second run makes an order of its own')
  t.match(paid, { id: created.id, status: 'paid', version: 2 }, 'and moves it')
  t.same(page.items.map(order => order.id), [created.id, first.id], 'the list shows both, newest first')
  t.match(settled, { id: created.id, version: 3, balance: 0 }, 'and records its payment')
})

t.test('every link between the README and the guides leads to a file, and the README links every guide', async t => {
  for (const [path, text] of documents) {
    for (const [, target] of text.matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)) {
      t.ok(existsSync(join(root, dirname(path), target!)), `${path} → ${target}`)
    }
  }
  for (const path of documents.keys()) {
    if (path !== 'README.md') t.match(readme, `](${path})`, `the README links ${path}`)
  }
  t.ok(readme.split('\n').length < 600, 'the README stays a reference')
})

t.test('the workflow diagram of the README is workflowDiagram of the default workflow', async t => {
  const diagram = blocksOf(readme).find(block => block.lang === 'mermaid')!.code
  t.equal(diagram, workflowDiagram(defaultWorkflow))
})

t.test('the error table of the README lists every code the plugin sends', async t => {
  const section = readme.slice(readme.indexOf('## Errors'), readme.indexOf('## The workflow'))
  const rows = [...section.matchAll(/^\| (\d{3}) \| `(\w+)` \|/gm)].map(([, status, code]) => ({ status: Number(status), code: code! }))
  const inTable = new Set(rows.map(row => row.code))
  // The codes thrown to host code only are named in the paragraph after the table.
  const thrownToCode = section.slice(section.indexOf('thrown to your code'))
  for (const [code, ErrorCode] of Object.entries(codes)) {
    const error = new ErrorCode('x', 'y')
    if (error.statusCode === 500 || thrownToCode.includes(`\`${code}\``)) t.match(section, `\`${code}\``, `${code} is mentioned`)
    else t.ok(inTable.has(code), `${code} is in the table`)
  }
  for (const { status, code } of rows) {
    const ErrorCode = (codes as Record<string, new (...args: string[]) => { statusCode?: number }>)[code]
    if (ErrorCode !== undefined) t.equal(new ErrorCode('x', 'y').statusCode, status, `${code} is a ${status}`)
  }
})

/** The `status code` of each row of the first table after `heading` in `text`. */
function errorRows (text: string, heading: string): string[] {
  const section = text.slice(text.indexOf(heading))
  const table = section.slice(section.indexOf('\n|')).split(/\n(?!\|)/)[0]!
  return [...table.matchAll(/^\| (\d{3}) \| `(\w+)` \|/gm)].map(([, status, code]) => `${status} ${code}`)
}

t.test('the HTTP guide agrees with the README: every body field and filter of each route, and the same error table', async t => {
  const bodies = { createOrder: CreateOrderBodySchema, updateOrderStatus: UpdateOrderStatusBodySchema, getOrderList: ListOrdersBodySchema }
  for (const [route, schema] of Object.entries(bodies)) {
    const properties = schema.properties as Record<string, { properties?: object }>
    const fields = [...Object.keys(properties), ...Object.keys(properties.filter?.properties ?? {})]
    for (const document of ['README.md', 'docs/http.md']) {
      const text = documents.get(document)!
      // What the route's section says before its first call.
      const heading = new RegExp(`^#{2,3} ${route}$`, 'm').exec(text)!
      const words = text.slice(heading.index, text.indexOf('```', heading.index))
      for (const field of fields) t.match(words, new RegExp(`\\b${field}\\b`), `${document}, ${route}: ${field}`)
    }
  }
  t.same(errorRows(documents.get('docs/http.md')!, '## Errors'), errorRows(readme, '## Errors'))
  t.ok(errorRows(readme, '## Errors').length >= 15, 'the tables are read')
})

t.test('the webhooks guide\'s options table is one table with a row for every option webhook() accepts', async t => {
  const guide = documents.get('docs/webhooks.md')!
  const table = guide.slice(guide.indexOf('| option | default | meaning |')).split('\n\n')[0]!
  const documented = [...table.matchAll(/^\| `(\w+)` \|/gm)].map(([, name]) => name)
  // The option checker's message lists every option webhook() reads.
  let known: string[] = []
  try {
    webhook({ unknownOption: true } as never)
  } catch (err) {
    known = /the options are (.*)$/.exec((err as Error).message)![1]!.split(', ')
  }
  t.ok(known.length > 0, 'webhook() says which options it reads')
  t.same(documented.sort(), known.sort())
})

t.test('withTransaction is documented on both SQL storages wherever it is described', async t => {
  t.match(documents.get('docs/transactions.md')!.split('\n')[0], /PostgreSQL.*MySQL/, 'the guide\'s title')
  for (const [path, text] of [['README.md', readme], ['CHANGELOG.md', readFileSync(join(root, 'CHANGELOG.md'), 'utf8')]]) {
    const paragraphs = text!.split('\n\n').filter(paragraph => paragraph.includes('withTransaction') && paragraph.includes('PostgreSQL'))
    t.ok(paragraphs.length > 0, `${path} describes it`)
    for (const paragraph of paragraphs) t.match(paragraph, /MySQL/, `${path}: ${paragraph.slice(0, 60)}…`)
  }
})

t.test('the README states the Node.js lines package.json requires, which every locked dependency accepts, and says how to install before a release near the top', async t => {
  const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
  const major = Number(/^>=(\d+)$/.exec(engines.node)![1])
  t.match(readme, `Requires Node.js ${major} or later`)
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> }
  const wantMore = Object.entries(lock.packages).filter(([, { engines }]) => {
    const lowest = /^>=\s*(\d+)/.exec(engines?.node ?? '')
    return lowest !== null && Number(lowest[1]) > major
  }).map(([path, { engines }]) => `${path} ${engines!.node!}`)
  t.same(wantMore, [], `no dependency wants more than Node.js ${major}`)
  const top = readme.slice(0, readme.indexOf('## The routes'))
  t.match(top, /E404[\s\S]*git URL[\s\S]*npm install fastify \.\.\/fastify-order/, 'installing before a release, in the first section on installing')
})
