// One order: its details, lines, history and payments, the moves the workflow allows and the change dialog.
import { call, Refusal, type Action, type Config, type Order } from './api.js'
import { h, newId, type Child } from './dom.js'
import { money, when } from './format.js'

export interface OrderActions {
  back: (event: Event) => void
  backHref: string
  /** The order as answered after a move or change. */
  show: (order: Order) => void
  /** A refusal: the order is fetched again and shown with the server's message. */
  refused: (refusal: Refusal) => void
  dialogClosed: () => void
}

function region (title: string, ...children: Child[]): HTMLElement {
  const id = newId('region')
  return h('section', { 'aria-labelledby': id, class: 'part' }, h('h3', { id }, title), ...children)
}

const field = (name: string, value: Child) => [h('dt', {}, name), h('dd', {}, value)]

function describeAction (action: Action, order: Order): string {
  const line = typeof action.index === 'number' ? order.items[action.index]?.sku ?? `line ${action.index}` : ''
  switch (action.type) {
    case 'setQuantity': return `quantity of ${line} set to ${String(action.quantity)}`
    case 'setUnitPrice': return `unit price of ${line} set to ${money(action.unitPrice as number, order.currency)}`
    case 'cancelItem': return `${String(action.quantity)} of ${line} cancelled`
    case 'returnItem': return `${String(action.quantity)} of ${line} returned`
    case 'addItem': {
      const item = action.item as { sku: string, quantity: number }
      return `line ${item.sku} added (${item.quantity})`
    }
    case 'recordPayment': return `payment ${money(action.amount as number, order.currency)} (${String(action.reference)})`
    case 'recordRefund': return `refund ${money(action.amount as number, order.currency)} (${String(action.reference)})`
    default: return action.type
  }
}

/** Moves and changes, oldest first, with when, by whom and why. */
function historyOf (order: Order): HTMLElement {
  const entries: Array<{ at: string, text: string, by?: string, reason?: string }> = order.statusHistory.map((entry, index) => ({
    at: entry.at,
    text: index === 0 ? `placed as ${entry.status}` : `moved to ${entry.status}`,
    by: entry.by,
    reason: entry.reason
  }))
  for (const change of order.changes ?? []) {
    entries.push({
      at: change.at,
      text: `changed: ${change.actions.map(action => describeAction(action, order)).join('; ')}; total ${money(change.totalBefore, order.currency)} → ${money(change.totalAfter, order.currency)}`,
      by: change.by,
      reason: change.reason
    })
  }
  entries.sort((a, b) => a.at.localeCompare(b.at))
  return h('ol', { class: 'history' }, ...entries.map(entry => h('li', {},
    h('time', { datetime: entry.at }, when(entry.at)), ' ', entry.text,
    entry.by !== undefined && [' by ', h('strong', {}, entry.by)],
    entry.reason !== undefined && [': ', h('q', {}, entry.reason)])))
}

export function renderOrder (order: Order, config: Config, alert: string | undefined, actions: OrderActions): HTMLElement {
  const currency = (amount: number) => money(amount, order.currency)
  const moves = config.moves[order.status] ?? []
  const back = h('a', { href: actions.backHref, onclick: actions.back }, 'Back to orders')
  const moveButtons = moves.map(status => {
    const button = h('button', { type: 'button' }, `Move to ${status}`)
    button.addEventListener('click', () => { openMove(order, status, button, actions) })
    return button
  })
  const change = config.changes ? h('button', { type: 'button' }, 'Change order') : undefined
  change?.addEventListener('click', () => { openChange(order, change, actions) })
  const metadata = Object.entries(order.metadata)
  return h('article', { class: 'order' },
    h('p', {}, back),
    h('h2', { tabindex: -1, id: 'order-heading' }, `Order #${order.number}`),
    alert !== undefined && h('p', { role: 'alert', class: 'alert' }, alert),
    h('dl', { class: 'details' },
      field('Customer', order.customerId),
      order.store !== undefined && field('Store', order.store),
      order.reference !== undefined && field('Reference', order.reference),
      field('Status', h('span', { class: `status status-${order.status}` }, order.status)),
      field('Total', currency(order.total)),
      config.changes && field('Paid', currency(order.paid ?? 0)),
      config.changes && field('Balance', currency(order.balance ?? order.total)),
      field('Placed', when(order.createdAt)),
      field('Updated', when(order.updatedAt)),
      field('Version', String(order.version)),
      field('Id', order.id),
      metadata.map(([key, value]) => field(key, value))),
    (moveButtons.length > 0 || change !== undefined) && h('p', { class: 'actions' }, ...moveButtons, change),
    region('Lines', h('div', { class: 'scroll', tabindex: 0, role: 'group', 'aria-label': 'Lines, scrollable' }, h('table', {},
      h('thead', {}, h('tr', {}, ...['SKU', 'Name', 'Quantity', 'Unit price', ...(config.changes ? ['Cancelled', 'Returned'] : [])].map(name => h('th', { scope: 'col', class: name === 'SKU' || name === 'Name' ? null : 'amount' }, name)))),
      h('tbody', {}, ...order.items.map(item => h('tr', {},
        h('td', {}, item.sku), h('td', {}, item.name ?? ''), h('td', { class: 'amount' }, String(item.quantity)),
        h('td', { class: 'amount' }, currency(item.unitPrice)),
        config.changes && [h('td', { class: 'amount' }, String(item.cancelled ?? 0)), h('td', { class: 'amount' }, String(item.returned ?? 0))])))))),
    region('History', historyOf(order)),
    config.changes && region('Payments', (order.payments ?? []).length === 0
      ? h('p', {}, 'No payments recorded.')
      : h('ul', {}, ...(order.payments ?? []).map(payment => h('li', {},
        h('time', { datetime: payment.at }, when(payment.at)), ' ', payment.kind === 'payment' ? 'payment ' : 'refund ',
        currency(payment.amount), ' ', h('code', {}, payment.reference), payment.by !== undefined && [' by ', payment.by])))))
}

/** A modal dialog named by its heading; Escape or Cancel closes it and gives focus back to `opener`. */
function dialogOf (title: string, opener: HTMLElement, actions: OrderActions, ...children: Child[]): HTMLDialogElement {
  const id = newId('dialog')
  const dialog = h('dialog', { 'aria-labelledby': id }, h('h2', { id }, title), ...children)
  dialog.addEventListener('close', () => {
    dialog.remove()
    if (opener.isConnected) opener.focus()
    actions.dialogClosed()
  })
  document.body.append(dialog)
  dialog.showModal()
  return dialog
}

function openMove (order: Order, status: string, opener: HTMLElement, actions: OrderActions): void {
  const reason = h('input', { type: 'text', id: newId('reason'), maxlength: 500, autocomplete: 'off' })
  const confirm = h('button', { type: 'submit' }, 'Confirm')
  const cancel = h('button', { type: 'button' }, 'Cancel')
  const form = h('form', {},
    h('p', { class: 'field' }, h('label', { for: reason.id }, 'Reason'), reason),
    h('p', { class: 'actions' }, confirm, cancel))
  const dialog = dialogOf(`Move order #${order.number} to ${status}`, opener, actions, form)
  cancel.addEventListener('click', () => { dialog.close() })
  form.addEventListener('submit', event => {
    event.preventDefault()
    confirm.disabled = true
    const body: Record<string, unknown> = { id: order.id, status, expectedVersion: order.version }
    if (reason.value.trim() !== '') body.reason = reason.value.trim()
    call<Order>('updateOrderStatus', body).then(moved => {
      dialog.close()
      actions.show(moved)
    }, (refusal: Refusal) => {
      dialog.close()
      actions.refused(refusal)
    })
  })
}

function openChange (order: Order, opener: HTMLElement, actions: OrderActions): void {
  const currency = (amount: number) => money(amount, order.currency)
  const cancels = order.items.map(() => 0)
  const returns = order.items.map(() => 0)
  const added: Action[] = []
  const money_: Action[] = []
  const list = h('ul', { class: 'composed', 'aria-label': 'Actions of the change' })
  const alert = h('div', {})
  const previewed = h('p', { role: 'status', class: 'preview' })
  const apply = h('button', { type: 'button', disabled: true }, 'Apply')
  let preview: { signature: string, expectedVersion: number } | undefined

  const quantities = order.items.map(item => h('input', {
    type: 'number', min: 0, max: 1000000, step: 1, value: item.quantity, 'aria-label': `Quantity of ${item.sku}`, inputmode: 'numeric'
  }))
  const reason = h('input', { type: 'text', id: newId('change-reason'), maxlength: 500, autocomplete: 'off' })

  function compose (): Action[] {
    const composed: Action[] = []
    quantities.forEach((input, index) => {
      const quantity = input.valueAsNumber
      if (Number.isInteger(quantity) && quantity !== order.items[index]!.quantity) composed.push({ type: 'setQuantity', index, quantity })
    })
    cancels.forEach((quantity, index) => { if (quantity > 0) composed.push({ type: 'cancelItem', index, quantity }) })
    returns.forEach((quantity, index) => { if (quantity > 0) composed.push({ type: 'returnItem', index, quantity }) })
    return [...composed, ...added, ...money_]
  }
  const bodyOf = () => {
    const body: Record<string, unknown> = { id: order.id, actions: compose() }
    if (reason.value.trim() !== '') body.reason = reason.value.trim()
    return body
  }
  const signature = () => JSON.stringify(bodyOf())
  function composedChanged () {
    fillList()
    apply.disabled = preview === undefined || preview.signature !== signature()
  }
  function fillList () {
    list.replaceChildren(...compose().map(action => h('li', {}, describeAction(action, order))))
  }
  for (const input of [...quantities, reason]) input.addEventListener('input', composedChanged)

  const lineRows = order.items.map((item, index) => {
    const counts = h('span', { class: 'counts' })
    const shown = () => { counts.textContent = [cancels[index]! > 0 ? `cancel ${cancels[index]}` : '', returns[index]! > 0 ? `return ${returns[index]}` : ''].filter(Boolean).join(', ') }
    const one = (label: string, counters: number[]) => {
      const button = h('button', { type: 'button' }, `${label} ${item.sku}`)
      button.addEventListener('click', () => { counters[index]! += 1; shown(); composedChanged() })
      return button
    }
    return h('li', {}, h('span', { class: 'sku' }, item.sku), ' ', item.name ?? '', ' ', quantities[index], one('Cancel one', cancels), one('Return one', returns), counts)
  })

  const sku = h('input', { type: 'text', id: newId('sku'), maxlength: 64, autocomplete: 'off' })
  const name = h('input', { type: 'text', id: newId('name'), maxlength: 200, autocomplete: 'off' })
  const quantity = h('input', { type: 'number', id: newId('quantity'), min: 1, max: 1000000, step: 1, value: 1 })
  const unitPrice = h('input', { type: 'number', id: newId('unit-price'), min: 0, step: 1, value: 0 })
  const addLine = h('button', { type: 'button' }, 'Add line')
  addLine.addEventListener('click', () => {
    if (sku.value === '' || !Number.isInteger(quantity.valueAsNumber) || !Number.isInteger(unitPrice.valueAsNumber)) return
    const item: Record<string, unknown> = { sku: sku.value, quantity: quantity.valueAsNumber, unitPrice: unitPrice.valueAsNumber }
    if (name.value !== '') item.name = name.value
    added.push({ type: 'addItem', item })
    sku.value = ''
    name.value = ''
    composedChanged()
  })
  const amount = h('input', { type: 'number', id: newId('amount'), min: 1, step: 1 })
  const reference = h('input', { type: 'text', id: newId('payment-reference'), maxlength: 255, autocomplete: 'off' })
  const record = (label: string, type: string) => {
    const button = h('button', { type: 'button' }, label)
    button.addEventListener('click', () => {
      if (!Number.isInteger(amount.valueAsNumber) || reference.value === '') return
      money_.push({ type, amount: amount.valueAsNumber, reference: reference.value })
      amount.value = ''
      reference.value = ''
      composedChanged()
    })
    return button
  }
  const labelled = (input: HTMLInputElement, text: string) => h('p', { class: 'field' }, h('label', { for: input.id }, text), input)

  const previewButton = h('button', { type: 'button' }, 'Preview')
  const cancel = h('button', { type: 'button' }, 'Cancel')
  const dialog = dialogOf(`Change order #${order.number}`, opener, actions,
    alert,
    h('ul', { class: 'lines' }, ...lineRows),
    region('Add a line', labelled(sku, 'SKU'), labelled(name, 'Name'), labelled(quantity, 'Quantity'), labelled(unitPrice, 'Unit price'), addLine),
    region('Payment or refund', labelled(amount, 'Amount'), labelled(reference, 'Payment reference'),
      h('p', { class: 'actions' }, record('Record payment', 'recordPayment'), record('Record refund', 'recordRefund'))),
    labelled(reason, 'Reason'),
    list,
    previewed,
    h('p', { class: 'actions' }, previewButton, apply, cancel))
  cancel.addEventListener('click', () => { dialog.close() })

  const refusal = (error: Refusal) => {
    alert.replaceChildren(h('p', { role: 'alert', class: 'alert' }, error.message))
  }
  previewButton.addEventListener('click', () => {
    const body = bodyOf()
    const shown = JSON.stringify(body)
    alert.replaceChildren()
    call<Order>('changeOrder', { ...body, expectedVersion: order.version, preview: true }).then(after => {
      preview = { signature: shown, expectedVersion: order.version }
      previewed.textContent = `Total ${currency(after.total)}, balance ${currency(after.balance ?? after.total)}`
      composedChanged()
    }, (error: Refusal) => {
      preview = undefined
      previewed.textContent = ''
      composedChanged()
      refusal(error)
    })
  })
  apply.addEventListener('click', () => {
    if (preview === undefined || preview.signature !== signature()) return
    apply.disabled = true
    call<Order>('changeOrder', { ...bodyOf(), expectedVersion: preview.expectedVersion }).then(changed => {
      dialog.close()
      actions.show(changed)
    }, (error: Refusal) => {
      preview = undefined
      composedChanged()
      refusal(error)
    })
  })
}

export { Refusal }
