import { Option } from "effect"

/**
 * How one configuration value is checked. `decode` gets the raw value and whether it is
 * text (an environment variable, always a string, which is coerced) or typed (TOML or a
 * CLI flag, which must already have the right type). `expected` completes the error
 * message "expected ...".
 */
export interface ValueSpec<A> {
  readonly expected: string
  readonly decode: (raw: unknown, fromText: boolean) => Option.Option<A>
}

const trimmed = (raw: unknown): string | undefined => (typeof raw === "string" ? raw.trim() : undefined)

const toNumber = (raw: unknown, fromText: boolean): number | undefined => {
  if (typeof raw === "number") return raw
  if (fromText) {
    const text = trimmed(raw)
    if (text !== undefined && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text)
  }
  return undefined
}

export const integer = (min: number, max?: number): ValueSpec<number> => ({
  expected: max === undefined ? `an integer >= ${min}` : `an integer between ${min} and ${max}`,
  decode: (raw, fromText) => {
    const n = toNumber(raw, fromText)
    return n !== undefined && Number.isSafeInteger(n) && n >= min && (max === undefined || n <= max)
      ? Option.some(n)
      : Option.none()
  }
})

export const positiveNumber: ValueSpec<number> = {
  expected: "a number > 0",
  decode: (raw, fromText) => {
    const n = toNumber(raw, fromText)
    return n !== undefined && Number.isFinite(n) && n > 0 ? Option.some(n) : Option.none()
  }
}

export const nonNegativeNumber: ValueSpec<number> = {
  expected: "a number >= 0",
  decode: (raw, fromText) => {
    const n = toNumber(raw, fromText)
    return n !== undefined && Number.isFinite(n) && n >= 0 ? Option.some(n) : Option.none()
  }
}

export const fraction: ValueSpec<number> = {
  expected: "a number between 0 and 1",
  decode: (raw, fromText) => {
    const n = toNumber(raw, fromText)
    return n !== undefined && Number.isFinite(n) && n >= 0 && n <= 1 ? Option.some(n) : Option.none()
  }
}

const TRUE = new Set(["true", "1", "yes", "on"])
const FALSE = new Set(["false", "0", "no", "off"])

export const boolean: ValueSpec<boolean> = {
  expected: "true or false",
  decode: (raw, fromText) => {
    if (typeof raw === "boolean") return Option.some(raw)
    const text = fromText ? trimmed(raw)?.toLowerCase() : undefined
    if (text !== undefined && TRUE.has(text)) return Option.some(true)
    if (text !== undefined && FALSE.has(text)) return Option.some(false)
    return Option.none()
  }
}

/** One of fixed words; `aliases` map an accepted spelling to its canonical value. */
export const literal = <const L extends string>(
  values: ReadonlyArray<L>,
  aliases: Readonly<Record<string, L>> = {}
): ValueSpec<L> => ({
  expected: `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  decode: (raw) => {
    const text = trimmed(raw)
    if (text === undefined) return Option.none()
    if ((values as ReadonlyArray<string>).includes(text)) return Option.some(text as L)
    return Object.hasOwn(aliases, text) ? Option.some(aliases[text]!) : Option.none()
  }
})

/** Any string, empty allowed (a prefix). */
export const anyString: ValueSpec<string> = {
  expected: "a string",
  decode: (raw) => (typeof raw === "string" ? Option.some(raw) : Option.none())
}

export const nonEmptyString: ValueSpec<string> = {
  expected: "a non-empty string",
  decode: (raw) => {
    const text = trimmed(raw)
    return text !== undefined && text.length > 0 ? Option.some(text) : Option.none()
  }
}

/** A secret is kept exactly as given (no trimming inside); only empty is refused. */
export const secretString: ValueSpec<string> = {
  expected: "a non-empty string",
  decode: (raw) => (typeof raw === "string" && raw.trim().length > 0 ? Option.some(raw.trim()) : Option.none())
}

/** Host names and addresses: no whitespace; resolving them is the server's job. */
export const host: ValueSpec<string> = {
  expected: "a host name or IP address",
  decode: (raw) => {
    const text = trimmed(raw)
    return text !== undefined && /^[^\s/]+$/.test(text) ? Option.some(text) : Option.none()
  }
}

const urlWith = (protocols: ReadonlyArray<string>, expected: string): ValueSpec<string> => ({
  expected,
  decode: (raw) => {
    const text = trimmed(raw)
    if (text === undefined || !URL.canParse(text)) return Option.none()
    return protocols.includes(new URL(text).protocol) ? Option.some(text) : Option.none()
  }
})

export const httpUrl: ValueSpec<string> = urlWith(["http:", "https:"], "an http:// or https:// URL")

/** A host that may omit its scheme (Pinecone shows index hosts bare); https is assumed. */
export const hostUrl: ValueSpec<string> = {
  expected: "a host name or an http:// or https:// URL",
  decode: (raw, fromText) => {
    const text = trimmed(raw)
    if (text === undefined) return Option.none()
    return httpUrl.decode(text.includes("://") ? text : `https://${text}`, fromText)
  }
}

export const postgresUrl: ValueSpec<string> = urlWith(
  ["postgres:", "postgresql:"],
  "a postgres:// or postgresql:// URL"
)

/** The request rule for model names (seed: at most 128 bytes, no whitespace or control characters). */
export const modelName: ValueSpec<string> = {
  expected: "a model name (1 to 128 bytes, no whitespace or control characters)",
  decode: (raw) => {
    if (typeof raw !== "string" || raw.length === 0) return Option.none()
    if (/[\s\u0000-\u001f\u007f]/.test(raw)) return Option.none()
    return new TextEncoder().encode(raw).length <= 128 ? Option.some(raw) : Option.none()
  }
}

/**
 * A list: a TOML array, or in an environment variable the items separated by commas (an empty
 * variable is the empty list). Every item must pass `item`.
 */
export const list = <A>(item: ValueSpec<A>): ValueSpec<ReadonlyArray<A>> => ({
  expected: `a list of ${item.expected.replace(/^an? /, "")}s`,
  decode: (raw, fromText) => {
    const items = Array.isArray(raw)
      ? raw
      : fromText && typeof raw === "string"
      ? raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
      : undefined
    if (items === undefined) return Option.none()
    const out: Array<A> = []
    for (const one of items) {
      const decoded = item.decode(one, fromText)
      if (Option.isNone(decoded)) return Option.none()
      out.push(decoded.value)
    }
    return Option.some(out)
  }
})

/** A browser origin: `http(s)://host[:port]`, nothing after it; kept in its serialized form. */
export const origin: ValueSpec<string> = {
  expected: "an origin (http:// or https://, a host and maybe a port, no path)",
  decode: (raw) => {
    const text = trimmed(raw)
    if (text === undefined || !URL.canParse(text)) return Option.none()
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") return Option.none()
    return text.replace(/\/$/, "").toLowerCase() === url.origin ? Option.some(url.origin) : Option.none()
  }
}
