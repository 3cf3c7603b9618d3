/**
 * A strict little XML parser for tests (no dependency has one): elements, attributes, text and
 * the five predefined entities plus character references. It throws on anything that is not
 * well-formed: unbalanced or mismatched tags, unquoted or repeated attributes, a bare `&` or
 * `<`, characters XML 1.0 forbids, more than one root element.
 */

export interface XmlElement {
  readonly name: string
  readonly attributes: Readonly<Record<string, string>>
  readonly children: ReadonlyArray<XmlElement>
  readonly text: string
}

const NAME = /^[A-Za-z_][\w.:-]*/
const FORBIDDEN = /[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" }

const decode = (raw: string, where: string): string => {
  if (raw.includes("<")) throw new Error(`'<' in ${where}`)
  return raw.replace(/&([^;]*);?/g, (match, ref: string) => {
    if (!match.endsWith(";")) throw new Error(`bare '&' in ${where}`)
    if (ref.startsWith("#x")) return String.fromCodePoint(parseInt(ref.slice(2), 16))
    if (ref.startsWith("#")) return String.fromCodePoint(parseInt(ref.slice(1), 10))
    const value = ENTITIES[ref]
    if (value === undefined) throw new Error(`unknown entity &${ref}; in ${where}`)
    return value
  })
}

export const parseXml = (input: string): XmlElement => {
  if (FORBIDDEN.test(input)) throw new Error("a character XML 1.0 forbids")
  let i = 0
  const skipSpace = () => {
    while (i < input.length && /\s/.test(input[i]!)) i++
  }
  const expect = (s: string) => {
    if (!input.startsWith(s, i)) {
      throw new Error(`expected ${JSON.stringify(s)} at ${i}: ${JSON.stringify(input.slice(i, i + 40))}`)
    }
    i += s.length
  }
  const name = () => {
    const m = NAME.exec(input.slice(i))
    if (m === null) throw new Error(`expected a name at ${i}`)
    i += m[0].length
    return m[0]
  }
  const element = (): XmlElement => {
    expect("<")
    const tag = name()
    const attributes: Record<string, string> = {}
    for (;;) {
      skipSpace()
      if (input.startsWith("/>", i)) {
        i += 2
        return { name: tag, attributes, children: [], text: "" }
      }
      if (input[i] === ">") {
        i++
        break
      }
      const attr = name()
      if (attr in attributes) throw new Error(`repeated attribute ${attr} on <${tag}>`)
      skipSpace()
      expect("=")
      skipSpace()
      const quote = input[i]
      if (quote !== "\"" && quote !== "'") throw new Error(`unquoted attribute ${attr} on <${tag}>`)
      const end = input.indexOf(quote, i + 1)
      if (end < 0) throw new Error(`unterminated attribute ${attr}`)
      attributes[attr] = decode(input.slice(i + 1, end), `attribute ${attr} of <${tag}>`)
      i = end + 1
    }
    const children: Array<XmlElement> = []
    let text = ""
    for (;;) {
      const next = input.indexOf("<", i)
      if (next < 0) throw new Error(`<${tag}> is never closed`)
      text += decode(input.slice(i, next), `<${tag}>`)
      i = next
      if (input.startsWith("</", i)) {
        i += 2
        const closing = name()
        if (closing !== tag) throw new Error(`</${closing}> closes <${tag}>`)
        skipSpace()
        expect(">")
        return { name: tag, attributes, children, text }
      }
      children.push(element())
    }
  }
  skipSpace()
  if (input.startsWith("<?xml", i)) {
    const end = input.indexOf("?>", i)
    if (end < 0) throw new Error("unterminated XML declaration")
    i = end + 2
  }
  skipSpace()
  const root = element()
  skipSpace()
  if (i !== input.length) throw new Error(`content after the root element at ${i}`)
  return root
}

/** The `<data key>` values of a GraphML node or edge. */
export const dataOf = (element: XmlElement): Record<string, string> =>
  Object.fromEntries(element.children.filter((c) => c.name === "data").map((c) => [c.attributes.key!, c.text]))
