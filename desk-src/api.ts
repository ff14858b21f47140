// Calls to the plugin's routes, relative to the page, with the tab's token when one was given.
export interface Config {
  title: string
  api: string
  initial: string
  statuses: string[]
  moves: Record<string, string[]>
  changes: boolean
}

export interface Item { sku: string, name?: string, quantity: number, unitPrice: number, cancelled?: number, returned?: number }
export interface HistoryEntry { status: string, at: string, reason?: string, by?: string }
export interface Payment { kind: 'payment' | 'refund', amount: number, reference: string, at: string, by?: string }
export interface ChangeRecord { version: number, at: string, by?: string, reason?: string, actions: Action[], totalBefore: number, totalAfter: number }
export type Action = Record<string, unknown> & { type: string }
export interface Order {
  id: string
  number: number
  reference?: string
  store?: string
  customerId: string
  status: string
  currency: string
  items: Item[]
  total: number
  metadata: Record<string, string>
  version: number
  statusHistory: HistoryEntry[]
  createdAt: string
  updatedAt: string
  paid?: number
  balance?: number
  payments?: Payment[]
  changes?: ChangeRecord[]
}
export interface OrderPage { items: Order[], nextCursor: string | null }

const TOKEN = 'fastify-order-desk-token'

export const token = {
  get: () => sessionStorage.getItem(TOKEN),
  set: (value: string) => sessionStorage.setItem(TOKEN, value),
  clear: () => sessionStorage.removeItem(TOKEN)
}

/** An answer other than 2xx: the server's status, code and message. */
export class Refusal extends Error {
  constructor (readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

export function headers (extra: Record<string, string> = {}): Record<string, string> {
  const bearer = token.get()
  return bearer === null ? extra : { ...extra, authorization: `Bearer ${bearer}` }
}

let base = './'
export const setBase = (api: string) => { base = api }
export const addressOf = (route: string) => new URL(`${base}${route}`, document.baseURI).href

export async function call<T> (route: string, body: object): Promise<T> {
  let answer: Response
  try {
    answer = await fetch(addressOf(route), { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(body), credentials: 'same-origin' })
  } catch {
    throw new Refusal(0, 'NETWORK', 'The server could not be reached.')
  }
  const json = await answer.json().catch(() => ({})) as { code?: string, message?: string }
  if (!answer.ok) throw new Refusal(answer.status, json.code ?? String(answer.status), json.message ?? answer.statusText)
  return json as T
}
