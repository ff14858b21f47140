// The desk's routes: the page, its script and style, and what it learns of the plugin's options, all from memory behind desk.hooks.
import type { FastifyInstance, FastifyReply, FastifySchema } from 'fastify'
import type { CompiledWorkflow } from '../orders/workflow.js'
import type { DeskConfig } from './desk-options.js'
import { loadDeskAssets, type DeskAsset } from './desk-assets.js'
import { DESK_CSP, deskHtml } from './desk-page.js'

export interface DeskRoutesOptions {
  desk: DeskConfig
  /** The plugin's prefix: the page finds the data routes relative to itself. */
  prefixPath: string | undefined
  workflow: CompiledWorkflow
  changes: boolean
  /** Where the built page is; the package's own by default. */
  folder?: URL
}

/** The address of `{prefix}/order/` relative to the page at `{prefix}{path}`: it works under any prefix and behind a proxy's path. */
export function apiBaseOf (prefix: string | undefined, path: string): string {
  const prefixSegments = (prefix ?? '').split('/').filter(segment => segment !== '')
  const pageFolder = [...prefixSegments, ...path.split('/').filter(segment => segment !== '')].slice(0, -1)
  const target = [...prefixSegments, 'order']
  let common = 0
  while (common < pageFolder.length && common < target.length && pageFolder[common] === target[common]) common++
  return '../'.repeat(pageFolder.length - common) + target.slice(common).map(segment => `${segment}/`).join('') || './'
}

function send (reply: FastifyReply, type: string, body: string | Buffer, cache: string) {
  return reply
    .header('content-type', type)
    .header('content-security-policy', DESK_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', cache)
    .send(body)
}

export async function deskRoutes (fastify: FastifyInstance, options: DeskRoutesOptions): Promise<void> {
  const { desk, workflow } = options
  const assets = loadDeskAssets(options.folder)
  const below = desk.path.slice(desk.path.lastIndexOf('/') + 1)
  const html = deskHtml(desk.title, below, assets)
  const config = JSON.stringify({
    title: desk.title,
    api: apiBaseOf(options.prefixPath, desk.path),
    initial: workflow.initial,
    statuses: workflow.statuses,
    moves: Object.fromEntries(workflow.statuses.map(status => [status, workflow.targetsOf(status)])),
    changes: options.changes
  })
  // `hide` is @fastify/swagger's: the page is no API of the plugin's.
  const common = { schema: { hide: true } as FastifySchema, onRequest: desk.hooks?.onRequest, preHandler: desk.hooks?.preHandler }

  fastify.get(desk.path, common, async (_request, reply) => send(reply, 'text/html; charset=utf-8', html, 'no-cache'))
  fastify.get(`${desk.path}/config.json`, common, async (_request, reply) => send(reply, 'application/json; charset=utf-8', config, 'no-cache'))
  const asset = ({ name, type, body }: DeskAsset) => {
    // Named by their content: a browser keeps them for good and a new release names new files.
    fastify.get(`${desk.path}/${name}`, common, async (_request, reply) => send(reply, type, body, 'public, max-age=31536000, immutable'))
  }
  asset(assets.script)
  asset(assets.style)
}
