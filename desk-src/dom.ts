// Elements made from data as text only: a string child is a text node, never markup.
export type Child = Node | string | number | null | undefined | false | Child[]
type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>

export function h<K extends keyof HTMLElementTagNameMap> (tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.slice(2), value)
    else if (value === true) element.setAttribute(name, '')
    else element.setAttribute(name, String(value))
  }
  append(element, children)
  return element
}

export function append (parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(parent, child)
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

/** Replaces the children of `parent`. */
export function fill (parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, children)
}

let ids = 0
export const newId = (stem: string) => `${stem}-${++ids}`
