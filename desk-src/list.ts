// The list of orders: search, status and balance filters, keyset pages, all kept in the address.
import { call, type Config, type Order, type OrderPage } from './api.js'
import { h, fill, type Child } from './dom.js'
import { money, when } from './format.js'

export interface ListState { q: string, statuses: string[], balance: string, cursor: string, prev: string[] }

export function listStateOf (address: URL, prev: string[]): ListState {
  const search = address.searchParams
  return {
    q: search.get('q') ?? '',
    statuses: (search.get('status') ?? '').split(',').filter(status => status !== ''),
    balance: search.get('balance') ?? '',
    cursor: search.get('cursor') ?? '',
    prev
  }
}

export function listQuery (state: Pick<ListState, 'q' | 'statuses' | 'balance' | 'cursor'>): string {
  const search = new URLSearchParams()
  if (state.q !== '') search.set('q', state.q)
  if (state.statuses.length > 0) search.set('status', state.statuses.join(','))
  if (state.balance !== '') search.set('balance', state.balance)
  if (state.cursor !== '') search.set('cursor', state.cursor)
  const text = search.toString()
  return text === '' ? '?' : `?${text}`
}

const PAGE = 20

/** The page the state names: a number finds that order; other text its reference or customer id. */
export async function fetchList (state: ListState, config: Config): Promise<OrderPage> {
  const filter: Record<string, unknown> = {}
  if (state.statuses.length > 0) filter.status = state.statuses
  if (state.balance !== '' && config.changes) filter.balance = state.balance
  const q = state.q.trim()
  const cursor = state.cursor === '' ? {} : { cursor: state.cursor }
  const number = /^#?(\d{1,15})$/.exec(q)
  if (number !== null) return await call<OrderPage>('getOrderList', { limit: PAGE, filter: { ...filter, number: Number(number[1]) }, ...cursor })
  if (q === '') return await call<OrderPage>('getOrderList', { limit: PAGE, filter, ...cursor })
  // References are few per customer: the first page adds the orders with that reference to the customer's pages.
  const [byCustomer, byReference] = await Promise.all([
    call<OrderPage>('getOrderList', { limit: PAGE, filter: { ...filter, customerId: q }, ...cursor }),
    state.cursor === '' && q.length <= 128 ? call<OrderPage>('getOrderList', { limit: PAGE, filter: { ...filter, reference: q } }) : { items: [], nextCursor: null }
  ])
  const seen = new Set(byCustomer.items.map(order => order.id))
  const items = [...byReference.items.filter(order => !seen.has(order.id)), ...byCustomer.items]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
  return { items, nextCursor: byCustomer.nextCursor }
}

export interface ListView {
  element: HTMLElement
  search: HTMLInputElement
}

export interface ListActions {
  /** Goes to the list with these search and filters, first page. */
  filter: (state: Pick<ListState, 'q' | 'statuses' | 'balance'>) => void
  next: () => void
  previous: () => void
  open: (order: Order) => void
}

export function renderList (state: ListState, page: OrderPage, config: Config, actions: ListActions): ListView {
  const search = h('input', { type: 'search', id: 'desk-search', name: 'q', value: state.q, autocomplete: 'off', 'aria-keyshortcuts': '/' })
  const boxes = config.statuses.map(status => h('input', { type: 'checkbox', name: 'status', value: status, checked: state.statuses.includes(status) }))
  const balance = config.changes
    ? h('select', { id: 'desk-balance', name: 'balance' },
      ...[['', 'All'], ['due', 'Due'], ['settled', 'Settled'], ['owed', 'Owed']].map(([value, label]) =>
        h('option', { value: value!, selected: state.balance === value }, label!)))
    : undefined
  const apply = () => actions.filter({
    q: search.value.trim(),
    statuses: boxes.filter(box => box.checked).map(box => box.value),
    balance: balance?.value ?? ''
  })
  const form = h('form', { role: 'search', class: 'filters', onsubmit: (event: Event) => { event.preventDefault(); apply() } },
    h('p', { class: 'field' }, h('label', { for: 'desk-search' }, 'Search orders'), search, h('button', { type: 'submit' }, 'Search')),
    h('fieldset', {}, h('legend', {}, 'Status'),
      ...boxes.map((box, index) => h('label', { class: 'check' }, box, config.statuses[index]))),
    balance !== undefined && h('p', { class: 'field' }, h('label', { for: 'desk-balance' }, 'Balance'), balance))
  for (const box of boxes) box.addEventListener('change', apply)
  balance?.addEventListener('change', apply)

  const withStore = page.items.some(order => order.store !== undefined)
  const headers = ['Order', 'Placed', 'Customer', 'Status', 'Total', withStore && 'Store', config.changes && 'Balance']
    .filter((name): name is string => typeof name === 'string')
  const rows = page.items.map(order => {
    const link = h('a', { href: `?order=${encodeURIComponent(order.id)}` }, `#${order.number}`)
    link.addEventListener('click', event => {
      if (event.ctrlKey || event.metaKey || event.shiftKey) return
      event.preventDefault()
      actions.open(order)
    })
    const cells: Child[] = [
      h('th', { scope: 'row' }, link),
      h('td', {}, when(order.createdAt)),
      h('td', {}, order.customerId),
      h('td', {}, h('span', { class: `status status-${order.status}` }, order.status)),
      h('td', { class: 'amount' }, money(order.total, order.currency))
    ]
    if (withStore) cells.push(h('td', {}, order.store ?? ''))
    if (config.changes) cells.push(h('td', { class: 'amount' }, money(order.balance ?? order.total, order.currency)))
    return h('tr', { 'data-id': order.id }, ...cells)
  })
  const count = page.items.length === 0 ? 'No orders found' : `Showing ${page.items.length} ${page.items.length === 1 ? 'order' : 'orders'}`
  const element = h('div', { class: 'list' },
    form,
    h('p', { role: 'status', class: 'count' }, count),
    h('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Orders, scrollable' },
      h('table', {},
        h('caption', {}, 'Orders'),
        h('thead', {}, h('tr', {}, ...headers.map(name => h('th', { scope: 'col', class: name === 'Total' || name === 'Balance' ? 'amount' : null }, name)))),
        h('tbody', {}, ...rows))),
    h('nav', { 'aria-label': 'Pages', class: 'pages' },
      h('button', { type: 'button', disabled: state.prev.length === 0, onclick: actions.previous }, 'Previous page'),
      h('button', { type: 'button', disabled: page.nextCursor === null, onclick: actions.next }, 'Next page')))
  return { element, search }
}

export { fill }
