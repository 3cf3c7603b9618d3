/**
 * The context block (pure): facts and entities rendered one a line under two headers, cut to a
 * token budget counted with the project's tokenizer (`countTokens`, cl100k_base). The format is
 * documented in docs/READ.md ("Context block") and tested literally; change both together.
 *
 *   # Facts
 *   - Alice Novak lives in Lisbon (since 2021-01-01)
 *   - Alice Novak lives in Berlin (2020-01-01 to 2021-01-01)
 *   - Alice Novak lives in Porto (until 2020-01-01)
 *   # Entities
 *   - Alice Novak (person): a person
 *
 * Lines are joined by "\n", with no trailing newline; a section whose items all fail to fit is
 * left out with its header; nothing fits: the block is "" (0 tokens).
 */
import { collapseWhitespace, nameKey } from "../kernel/normalize.js"
import { countTokens } from "../kernel/tokenizer.js"
import type { EntityItem, FactItem } from "./views.js"

export const FACTS_HEADER = "# Facts"
export const ENTITIES_HEADER = "# Entities"

/** `2021-01-01T00:00:00.000Z` -> `2021-01-01` */
const day = (iso: string): string => {
  const t = iso.indexOf("T")
  return t === -1 ? iso : iso.slice(0, t)
}

/**
 * The fact as a sentence: its description when it names both endpoints (the extraction asks for
 * "the fact as one self-contained sentence"), without a final full stop; otherwise (a description
 * that leans on context, "moved there in 2021") `source relation target`, the relation's `_` as
 * spaces.
 */
export const factSentence = (f: Pick<FactItem, "source" | "relation" | "target" | "description">): string => {
  const description = collapseWhitespace(f.description).replace(/\.+$/u, "").trimEnd()
  const text = nameKey(description)
  if (description !== "" && text.includes(nameKey(f.source)) && text.includes(nameKey(f.target))) {
    return description
  }
  return collapseWhitespace(`${f.source} ${f.relation.replaceAll("_", " ")} ${f.target}`)
}

/**
 * What a fact's line says of its times: `since <valid_at day>`, `<valid_at day> to <invalid_at
 * day>` when it has an end, `until <invalid_at day>` when its start is unknown (valid_at null:
 * true at any time before its end). Undefined when neither is known: an unknown start whose end a
 * known_at view hides (the contracts give every fact a start or an end).
 */
const factDates = (f: Pick<FactItem, "valid_at" | "invalid_at">): string | undefined => {
  if (f.valid_at === null) return f.invalid_at === undefined ? undefined : `until ${day(f.invalid_at)}`
  return f.invalid_at === undefined ? `since ${day(f.valid_at)}` : `${day(f.valid_at)} to ${day(f.invalid_at)}`
}

/** `- <sentence> (<dates>)` (factDates), or the sentence alone when nothing is known of its times. */
export const factLine = (f: FactItem): string => {
  const dates = factDates(f)
  return collapseWhitespace(`- ${factSentence(f)}${dates === undefined ? "" : ` (${dates})`}`)
}

/**
 * `- <name> (<type>): <summary>` (what its texts said of it, else its description); without a
 * type or a description, without that part.
 */
export const entityLine = (e: Pick<EntityItem, "name" | "type" | "description" | "summary">): string => {
  const type = collapseWhitespace(e.type)
  const description = collapseWhitespace(e.summary ?? e.description)
  // collapsed as a whole, so that no line ends in a space (an empty name would leave one)
  return collapseWhitespace(
    `- ${e.name}${type === "" ? "" : ` (${type})`}${description === "" ? "" : `: ${description}`}`
  )
}

export interface ContextBlock<F, E> {
  readonly context: string
  readonly facts: ReadonlyArray<F>
  readonly entities: ReadonlyArray<E>
  readonly tokens: number
}

/** A line with its count alone (the block's last line) and followed by the "\n" that joins it to the next. */
interface Counted {
  readonly text: string
  readonly last: number
  readonly joined: number
}

const counted = (text: string): Counted => ({ text, last: countTokens(text), joined: countTokens(`${text}\n`) })

type Item<F, E> = { readonly fact: F } | { readonly entity: E }

/**
 * The block of the facts and then the entities, each in the order given (best first), cut to
 * `maxTokens`: every item in turn is kept when the block with its line (and its section's header,
 * for a section's first item) still fits, else skipped (a shorter item after it may still fit).
 *
 * The count is exact. The lines have no line breaks and no leading or trailing whitespace, so no
 * pre-token of cl100k_base's pattern crosses a joining "\n" into the next line: the block's count
 * is the sum of each line's count with its "\n", but the last line's alone. `tokens` is counted
 * once more on the block as returned, and should that ever exceed the budget the last lines go.
 */
export const renderContext = <F extends FactItem, E extends EntityItem>(
  facts: ReadonlyArray<F>,
  entities: ReadonlyArray<E>,
  maxTokens: number
): ContextBlock<F, E> => {
  const kept: Array<{ readonly line: Counted; readonly item: Item<F, E> | null }> = []
  /** the joined counts of the kept lines but the last */
  let joinedBefore = 0
  const lastJoined = () => kept.at(-1)?.line.joined ?? 0
  /** the block's count with `lines` appended */
  const countWith = (lines: ReadonlyArray<Counted>) =>
    lines.reduce((n, l, i) => n + (i === lines.length - 1 ? l.last : l.joined), joinedBefore + lastJoined())
  const append = (line: Counted, item: Item<F, E> | null) => {
    joinedBefore += lastJoined()
    kept.push({ line, item })
  }
  const section = <A>(
    header: string,
    items: ReadonlyArray<A>,
    render: (a: A) => string,
    item: (a: A) => Item<F, E>
  ) => {
    const head = counted(header)
    let started = false
    for (const a of items) {
      const line = counted(render(a))
      if (countWith(started ? [line] : [head, line]) > maxTokens) continue
      if (!started) append(head, null)
      append(line, item(a))
      started = true
    }
  }
  section(FACTS_HEADER, facts, factLine, (fact) => ({ fact }))
  section(ENTITIES_HEADER, entities, entityLine, (entity) => ({ entity }))

  const text = () => kept.map((k) => k.line.text).join("\n")
  let context = text()
  let tokens = countTokens(context)
  while (tokens > maxTokens && kept.length > 0) {
    kept.pop()
    // a header left without items goes too
    if (kept.at(-1)?.item === null) kept.pop()
    context = text()
    tokens = countTokens(context)
  }
  return {
    context,
    facts: kept.flatMap(({ item }) => (item !== null && "fact" in item ? [item.fact] : [])),
    entities: kept.flatMap(({ item }) => (item !== null && "entity" in item ? [item.entity] : [])),
    tokens
  }
}
