// The desk: a client of the plugin's routes. Learns the workflow from config.json, then shows the list or one order, kept live by the event stream.
import { call, Refusal, setBase, token, type Config, type Order, type OrderPage } from './api.js'
import { fill, h } from './dom.js'
import { fetchList, listQuery, listStateOf, renderList, type ListState } from './list.js'
import { live, type StreamEvent } from './live.js'
import { renderOrder } from './order.js'

const main = document.getElementById('desk')!
const announce = h('p', { role: 'status', class: 'live', id: 'desk-live' })
main.before(announce)

let config: Config
let search: HTMLInputElement | undefined
let shown: { kind: 'list', state: ListState, page: OrderPage } | { kind: 'order', order: Order } | undefined
let dialogOpen = false
/** An order an event brought while a dialog was open, shown once it closes. */
let deferred: Order | undefined
let lastList = '?'
let stream: { restart: () => void } | undefined
const seen = new Set<string>()

const historyPrev = (): string[] => (history.state as { prev?: string[] } | null)?.prev ?? []

function go (query: string, prev: string[] = []): void {
  history.pushState({ prev }, '', query)
  route().catch(failed)
}

function signIn (): void {
  shown = undefined
  const input = h('input', { type: 'password', id: 'desk-token', autocomplete: 'current-password', required: true })
  const form = h('form', { class: 'sign-in' },
    h('h2', {}, 'Sign in'),
    h('p', {}, 'The server asks who you are. Paste an access token; it is kept for this tab only.'),
    h('p', { class: 'field' }, h('label', { for: 'desk-token' }, 'Access token'), input),
    h('p', {}, h('button', { type: 'submit' }, 'Sign in')))
  form.addEventListener('submit', event => {
    event.preventDefault()
    token.set(input.value.trim())
    stream?.restart()
    route().catch(failed)
  })
  fill(main, form)
  input.focus()
}

function failed (error: unknown): void {
  if (error instanceof Refusal && error.status === 401) {
    token.clear()
    signIn()
    return
  }
  fill(main, h('p', { role: 'alert', class: 'alert' }, error instanceof Error ? error.message : String(error)),
    h('p', {}, h('a', { href: lastList, onclick: (event: Event) => { event.preventDefault(); go(lastList) } }, 'Back to orders')))
}

async function route (focus = false): Promise<void> {
  const address = new URL(location.href)
  const id = address.searchParams.get('order')
  try {
    if (id !== null) {
      const page = await call<OrderPage>('getOrderList', { filter: { ids: [id] }, limit: 1 })
      const order = page.items[0]
      if (order === undefined) throw new Refusal(404, 'ORDER_NOT_FOUND', `Order ${id} was not found.`)
      showOrder(order, undefined, focus)
    } else {
      const state = listStateOf(address, historyPrev())
      const page = await fetchList(state, config)
      showList(state, page)
    }
  } catch (error) {
    failed(error)
  }
}

function showList (state: ListState, page: OrderPage): void {
  lastList = listQuery(state)
  shown = { kind: 'list', state, page }
  const hadFocus = document.activeElement === search
  const view = renderList(state, page, config, {
    filter: next => { go(listQuery({ ...next, cursor: '' })) },
    next: () => { if (page.nextCursor !== null) go(listQuery({ ...state, cursor: page.nextCursor }), [...state.prev, state.cursor]) },
    previous: () => {
      const prev = [...state.prev]
      const cursor = prev.pop() ?? ''
      go(listQuery({ ...state, cursor }), prev)
    },
    open: order => { go(`?order=${encodeURIComponent(order.id)}`) }
  })
  search = view.search
  fill(main, view.element)
  if (hadFocus) search.focus()
}

function showOrder (order: Order, alert?: string, focus = true): void {
  if (shown?.kind === 'order' && shown.order.id === order.id && shown.order.version > order.version) order = shown.order
  shown = { kind: 'order', order }
  search = undefined
  fill(main, renderOrder(order, config, alert, {
    backHref: lastList,
    back: event => { event.preventDefault(); go(lastList, []) },
    show: answered => { showOrder(answered) },
    refused: refusal => {
      if (refusal.status === 401) { failed(refusal); return }
      // The order as stored now, with the server's words; nothing is retried.
      call<OrderPage>('getOrderList', { filter: { ids: [order.id] }, limit: 1 }).then(
        page => { showOrder(page.items[0] ?? order, refusal.message) },
        () => { showOrder(order, refusal.message) })
    },
    dialogClosed: () => {
      dialogOpen = false
      // An event that came while the dialog was open is shown now, unless an answer showed a newer one meanwhile.
      const late = deferred
      deferred = undefined
      if (late !== undefined && shown?.kind === 'order' && shown.order === late) showOrder(late, undefined, false)
    }
  }))
  if (document.querySelector('dialog[open]') !== null) dialogOpen = true
  if (alert !== undefined) (main.querySelector('[role="alert"]') as HTMLElement | null)?.setAttribute('tabindex', '-1')
  if (focus) (main.querySelector(alert !== undefined ? '[role="alert"]' : '#order-heading') as HTMLElement | null)?.focus()
}

let listRefresh: ReturnType<typeof setTimeout> | undefined

function onEvent (event: StreamEvent): void {
  if (seen.has(event.id)) return
  seen.add(event.id)
  const { order } = event
  announce.textContent = event.type === 'created' ? `Order #${order.number} created` : `Order #${order.number} changed`
  if (shown?.kind === 'order') {
    if (shown.order.id !== order.id || order.version <= shown.order.version) return
    shown = { kind: 'order', order }
    if (!dialogOpen && document.querySelector('dialog[open]') === null) showOrder(order, undefined, false)
    else deferred = order
  } else if (shown?.kind === 'list') {
    // The list is asked again: the filters, and where the order now sorts, are the server's to decide.
    clearTimeout(listRefresh)
    listRefresh = setTimeout(() => { if (shown?.kind === 'list') route().catch(failed) }, 100)
  }
}

document.addEventListener('keydown', event => {
  const target = event.target as HTMLElement
  if (event.key === '/' && search !== undefined && !/^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) && !target.isContentEditable) {
    event.preventDefault()
    search.focus()
  }
})
document.addEventListener('click', () => { if (document.querySelector('dialog[open]') !== null) dialogOpen = true }, true)
window.addEventListener('popstate', () => { route().catch(failed) })

async function start (): Promise<void> {
  const address = document.querySelector('meta[name="fastify-order-desk"]')!.getAttribute('content')!
  const answer = await fetch(new URL(address, document.baseURI), { credentials: 'same-origin' })
  if (!answer.ok) throw new Error(`The desk's settings could not be read (${answer.status}).`)
  config = await answer.json() as Config
  setBase(config.api)
  await route()
  stream = live({
    event: onEvent,
    reset: () => { route().catch(failed) },
    unauthorized: () => { if (shown !== undefined) signIn() }
  })
}

start().catch(failed)
