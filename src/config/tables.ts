import { Effect, Option, Redacted } from "effect"
import { DEFAULT_PRICES, type ModelPrice } from "../kernel/cost.js"
import { ConfigInvalid, type ConfigSource, invalidValue, missingValue, sourceName } from "./ConfigInvalid.js"
import { AUTH_TOKENS_ENV } from "./keys.js"
import { envValue, fileSource, isTable, type Sources, tomlAt, type TomlTable } from "./sources.js"
import * as V from "./values.js"

/**
 * The keys of gligabao.toml that hold tables or arrays of tables: `[prices]`,
 * `[[timeseries.providers]]` and `[auth] tokens`. Each entry is checked field by field,
 * unknown fields included, with the entry named in the message.
 */

export interface TimeseriesProviderConfig {
  readonly name: string
  /** the built-in provider kind; `prices` reads daily closing prices from a CSV endpoint */
  readonly kind: "prices"
  /** shown to the LLM that picks a provider for an entity */
  readonly description: string
  readonly baseUrl: string
}

/**
 * A bearer token and who it stands for. `sha256` tokens hold the lower-case hex digest of
 * the token, so the file need not contain the token itself.
 */
export type AuthToken = {
  readonly kind: "plain" | "sha256"
  readonly secret: Redacted.Redacted<string>
} & ({ readonly admin: false; readonly userId: string } | { readonly admin: true })

/** A key as TOML would spell it: bare when it can be, quoted otherwise. */
const tomlKey = (name: string): string => (/^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name))

/** Reads the fields of one entry: rejects unknown ones, checks each present one. */
const entryReader = (entry: TomlTable, label: string, source: ConfigSource, allowed: ReadonlyArray<string>) => {
  const unknown = Object.keys(entry).find((name) => !allowed.includes(name))
  const check = unknown === undefined
    ? Effect.void
    : Effect.fail(
      new ConfigInvalid({
        message: `invalid config: unknown key ${label}.${tomlKey(unknown)} in ${sourceName(source)} (allowed: ${
          allowed.join(", ")
        })`,
        key: `${label}.${unknown}`,
        source: sourceName(source)
      })
    )
  const read = <A>(
    name: string,
    spec: V.ValueSpec<A>,
    secret = false
  ): Effect.Effect<Option.Option<A>, ConfigInvalid> => {
    const raw = entry[name]
    if (raw === undefined) return Effect.succeed(Option.none())
    return Option.match(spec.decode(raw, false), {
      onNone: () => Effect.fail(invalidValue(`${label}.${name}`, raw, source, spec.expected, secret)),
      onSome: (value) => Effect.succeed(Option.some(value))
    })
  }
  const require = <A>(name: string, spec: V.ValueSpec<A>, secret = false): Effect.Effect<A, ConfigInvalid> =>
    read(name, spec, secret).pipe(
      Effect.flatMap(
        Option.match({
          onNone: () => Effect.fail(missingValue(`${label}.${name}`, source, spec.expected)),
          onSome: Effect.succeed
        })
      )
    )
  return { check, read, require }
}

const notTable = (label: string, raw: unknown, source: ConfigSource, expected: string) =>
  Effect.fail(invalidValue(label, raw, source, expected))

/**
 * `[prices]`: model name -> the prices to override, field by field, over DEFAULT_PRICES
 * (merged by the caller with `mergePrices`). A model the built-in table does not know must
 * give `input` and `output`: a missing one would silently price it at 0.
 */
export const parsePrices = (
  sources: Sources
): Effect.Effect<Readonly<Record<string, Partial<ModelPrice>>>, ConfigInvalid> =>
  Effect.gen(function*() {
    const file = sources.file
    const table = file === undefined ? undefined : tomlAt(file.doc, ["prices"])
    if (file === undefined || table === undefined) return {}
    const source = fileSource(file)
    if (!isTable(table)) return yield* notTable("prices", table, source, "a table of model name -> prices")
    const prices: Record<string, Partial<ModelPrice>> = {}
    for (const [model, raw] of Object.entries(table)) {
      const label = `prices.${tomlKey(model)}`
      if (Option.isNone(V.modelName.decode(model, false))) {
        return yield* Effect.fail(invalidValue(label, model, source, `the key to be ${V.modelName.expected}`))
      }
      if (!isTable(raw)) return yield* notTable(label, raw, source, "a table { input = ..., output = ... }")
      const fields = ["input", "output", "cache_read", "cache_write", "per_1k_searches"] as const
      const entry = entryReader(raw, label, source, fields)
      yield* entry.check
      const known = Object.hasOwn(DEFAULT_PRICES, model)
      const price: { -readonly [K in keyof ModelPrice]?: number } = {}
      for (const field of fields) {
        const value = !known && (field === "input" || field === "output")
          ? Option.some(yield* entry.require(field, V.nonNegativeNumber))
          : yield* entry.read(field, V.nonNegativeNumber)
        if (Option.isSome(value)) price[field] = value.value
      }
      prices[model] = price
    }
    return prices
  })

const providerName: V.ValueSpec<string> = {
  expected: "a name of letters, digits, '_', '-' or '.' (at most 64)",
  decode: (raw) =>
    typeof raw === "string" && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(raw) ? Option.some(raw) : Option.none()
}

/** `[[timeseries.providers]]`: only the file defines providers; names are unique. */
export const parseTimeseriesProviders = (
  sources: Sources
): Effect.Effect<ReadonlyArray<TimeseriesProviderConfig>, ConfigInvalid> =>
  Effect.gen(function*() {
    const file = sources.file
    const list = file === undefined ? undefined : tomlAt(file.doc, ["timeseries", "providers"])
    if (file === undefined || list === undefined) return []
    const source = fileSource(file)
    if (!Array.isArray(list)) {
      return yield* notTable("timeseries.providers", list, source, "an array of tables ([[timeseries.providers]])")
    }
    const providers: Array<TimeseriesProviderConfig> = []
    for (const [index, raw] of list.entries()) {
      const label = `timeseries.providers[${index}]`
      if (!isTable(raw)) return yield* notTable(label, raw, source, "a table { name, kind, description, base_url }")
      const entry = entryReader(raw, label, source, ["name", "kind", "description", "base_url"])
      yield* entry.check
      const name = yield* entry.require("name", providerName)
      const kind = Option.getOrElse(yield* entry.read("kind", V.literal(["prices"])), () => "prices" as const)
      const description = yield* entry.require("description", V.nonEmptyString)
      const baseUrl = yield* entry.require("base_url", V.httpUrl)
      const earlier = providers.findIndex((p) => p.name === name)
      if (earlier >= 0) {
        return yield* Effect.fail(
          invalidValue(`${label}.name`, name, source, `a name not already used by timeseries.providers[${earlier}]`)
        )
      }
      providers.push({ name, kind, description, baseUrl })
    }
    return providers
  })

const SHA256 = /^sha256:([0-9a-fA-F]{64})$/

/** A plain token shorter than this is guessable; `openssl rand -hex 16` gives 32 characters. */
export const MIN_TOKEN_LENGTH = 24

const tokenSpec: V.ValueSpec<{ kind: "plain" | "sha256"; value: string }> = {
  expected: `a token of at least ${MIN_TOKEN_LENGTH} characters without whitespace, or "sha256:" and 64 hex digits`,
  decode: (raw) => {
    if (typeof raw !== "string" || !/^\S+$/.test(raw)) return Option.none()
    if (raw.toLowerCase().startsWith("sha256:")) {
      const match = SHA256.exec(raw)
      return match === null ? Option.none() : Option.some({ kind: "sha256", value: match[1]!.toLowerCase() })
    }
    return raw.length >= MIN_TOKEN_LENGTH ? Option.some({ kind: "plain", value: raw }) : Option.none()
  }
}

const AUTH_ENTRY = "{ token = \"...\", user_id = \"...\" } or { token = \"...\", admin = true }"
const AUTH_SHAPE = `an array of ${AUTH_ENTRY}`

/**
 * `[auth] tokens`, or GLIGABAO_AUTH_TOKENS (a JSON array of the same entries), which
 * replaces the file's list. An empty list leaves authentication off.
 */
export const parseAuthTokens = (sources: Sources): Effect.Effect<ReadonlyArray<AuthToken>, ConfigInvalid> =>
  Effect.gen(function*() {
    const fromEnv = envValue(sources.env, AUTH_TOKENS_ENV)
    let list: unknown
    let source: ConfigSource
    if (fromEnv !== undefined) {
      source = { _tag: "Env", name: AUTH_TOKENS_ENV }
      try {
        list = JSON.parse(fromEnv)
      } catch {
        return yield* Effect.fail(invalidValue("auth.tokens", fromEnv, source, `${AUTH_SHAPE} in JSON`, true))
      }
    } else if (sources.file !== undefined) {
      source = fileSource(sources.file)
      list = tomlAt(sources.file.doc, ["auth", "tokens"])
      if (list === undefined) return []
    } else {
      return []
    }
    // the list holds tokens: never echo it back
    if (!Array.isArray(list)) return yield* Effect.fail(invalidValue("auth.tokens", list, source, AUTH_SHAPE, true))

    const tokens: Array<AuthToken> = []
    const seen = new Map<string, number>()
    for (const [index, raw] of list.entries()) {
      const label = `auth.tokens[${index}]`
      if (!isTable(raw)) return yield* Effect.fail(invalidValue(label, raw, source, AUTH_ENTRY, true))
      const entry = entryReader(raw, label, source, ["token", "user_id", "admin"])
      yield* entry.check
      const token = yield* entry.require("token", tokenSpec, true)
      const userId = yield* entry.read("user_id", V.nonEmptyString)
      const admin = Option.getOrElse(yield* entry.read("admin", V.boolean), () => false)
      const key = `${token.kind}:${token.value}`
      const earlier = seen.get(key)
      if (earlier !== undefined) {
        return yield* Effect.fail(
          invalidValue(
            `${label}.token`,
            token.value,
            source,
            `a token not already listed in auth.tokens[${earlier}]`,
            true
          )
        )
      }
      seen.set(key, index)
      const secret = Redacted.make(token.value)
      if (admin && Option.isNone(userId)) {
        tokens.push({ kind: token.kind, secret, admin: true })
      } else if (!admin && Option.isSome(userId)) {
        tokens.push({ kind: token.kind, secret, admin: false, userId: userId.value })
      } else {
        const why = admin ? "either user_id or admin = true, not both" : "user_id = \"...\" or admin = true"
        return yield* Effect.fail(
          new ConfigInvalid({
            message: `invalid config: ${label} (from ${sourceName(source)}): expected ${why}`,
            key: label,
            source: sourceName(source)
          })
        )
      }
    }
    return tokens
  })
