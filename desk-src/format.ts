// Amounts in the order's currency and the browser's locale; dates in the browser's time zone.
const formats = new Map<string, Intl.NumberFormat>()

export function money (minor: number, currency: string): string {
  let format = formats.get(currency)
  if (format === undefined) {
    try {
      format = new Intl.NumberFormat(undefined, { style: 'currency', currency })
    } catch {
      format = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2 })
    }
    formats.set(currency, format)
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2
  return format.format(minor / 10 ** digits)
}

const dates = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
export const when = (at: string) => dates.format(new Date(at))
