import { FileSystem } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import * as Toml from "smol-toml"
import { closest } from "../domain/didYouMean.js"
import { ConfigInvalid, type ConfigSource, invalidValue, sourceName } from "./ConfigInvalid.js"
import type { ValueSpec } from "./values.js"

/** The CLI flags that override the file and the environment. */
export interface ConfigFlags {
  readonly config?: string | undefined
  readonly db?: string | undefined
  readonly databaseUrl?: string | undefined
  readonly imageDir?: string | undefined
  /** `true` enables geo; `false` is how a CLI reports an absent flag, so it changes nothing */
  readonly geo?: boolean | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
}

export type TomlTable = { readonly [key: string]: unknown }

/** The configuration file as read: its path and its parsed document. */
export interface ConfigFile {
  readonly path: string
  readonly doc: TomlTable
}

/** The three sources, lowest precedence first. */
export interface Sources {
  readonly file: ConfigFile | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly flags: ConfigFlags
}

export type FlagName = Exclude<keyof ConfigFlags, "config">

/** One scalar key: where it is looked up and how its value is checked. */
export interface KeyDef<A> {
  /** the TOML path, as written in messages and docs (`server.port`) */
  readonly key: string
  /** environment variables, the first one set wins */
  readonly env?: ReadonlyArray<string>
  readonly flag?: FlagName
  readonly spec: ValueSpec<A>
  readonly secret?: boolean
  /** an empty string in the file means "not set" (keys without a default, like commented secrets) */
  readonly emptyIsUnset?: boolean
  /** where the key is in the document, when not at its path (`geo = true`) */
  readonly lookup?: (doc: TomlTable) => unknown
}

export const isTable = (value: unknown): value is TomlTable =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date)

export const tomlAt = (doc: TomlTable, path: ReadonlyArray<string>): unknown => {
  let node: unknown = doc
  for (const segment of path) {
    if (!isTable(node) || !Object.hasOwn(node, segment)) return undefined
    node = node[segment]
  }
  return node
}

export const fileSource = (file: ConfigFile): ConfigSource => ({ _tag: "File", path: file.path })

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/** An environment variable counts when it is set to something other than blanks. */
export const envValue = (env: Sources["env"], name: string): string | undefined => {
  const value = env[name]
  return value !== undefined && value.trim() !== "" ? value : undefined
}

/**
 * The value of a key: a flag, else the first environment variable set, else the file.
 * The file's value is checked even when something overrides it, so a mistake in the file
 * does not wait for the override to be removed to surface.
 */
export const resolveKey = <A>(sources: Sources, def: KeyDef<A>): Effect.Effect<Option.Option<A>, ConfigInvalid> =>
  Effect.gen(function*() {
    const decode = (raw: unknown, source: ConfigSource, fromText: boolean) =>
      Option.match(def.spec.decode(raw, fromText), {
        onNone: () => Effect.fail(invalidValue(def.key, raw, source, def.spec.expected, def.secret === true)),
        onSome: (value) => Effect.succeed(Option.some(value))
      })

    let fromFile = Option.none<A>()
    if (sources.file !== undefined) {
      const doc = sources.file.doc
      const raw = def.lookup ? def.lookup(doc) : tomlAt(doc, def.key.split("."))
      const unset = raw === undefined || (def.emptyIsUnset === true && typeof raw === "string" && raw.trim() === "")
      if (!unset) fromFile = yield* decode(raw, fileSource(sources.file), false)
    }
    if (def.flag !== undefined) {
      const raw = sources.flags[def.flag]
      if (raw !== undefined) return yield* decode(raw, { _tag: "Flag", name: kebab(def.flag) }, false)
    }
    for (const name of def.env ?? []) {
      const raw = envValue(sources.env, name)
      if (raw !== undefined) return yield* decode(raw, { _tag: "Env", name }, true)
    }
    return fromFile
  })

export const resolveSecret = (
  sources: Sources,
  def: KeyDef<string>
): Effect.Effect<Option.Option<Redacted.Redacted<string>>, ConfigInvalid> =>
  resolveKey(sources, { ...def, secret: true }).pipe(Effect.map(Option.map(Redacted.make)))

/**
 * Reads the configuration file. The path comes from `--config`, else `GLIGABAO_CONFIG`,
 * else `defaultPath`; only the default may be missing (then every key has its default).
 */
export const readConfigFile = (
  flags: ConfigFlags,
  env: Sources["env"],
  defaultPath: string
): Effect.Effect<ConfigFile | undefined, ConfigInvalid, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const envPath = envValue(env, "GLIGABAO_CONFIG")
    const explicit: ConfigSource | undefined = flags.config !== undefined
      ? { _tag: "Flag", name: "config" }
      : envPath !== undefined
      ? { _tag: "Env", name: "GLIGABAO_CONFIG" }
      : undefined
    const path = flags.config ?? envPath ?? defaultPath
    const from = explicit === undefined ? "" : ` (from ${sourceName(explicit)})`
    const fail = (why: string) =>
      new ConfigInvalid({ message: `invalid config: config file ${path}${from} ${why}`, key: "config", source: path })

    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.map(Option.some),
      Effect.catchAll((error) => {
        const notFound = error._tag === "SystemError" && error.reason === "NotFound"
        if (notFound && explicit === undefined) return Effect.succeed(Option.none<string>())
        return Effect.fail(fail(notFound ? "does not exist" : `cannot be read: ${error.message}`))
      })
    )
    if (Option.isNone(text)) return undefined
    const doc = yield* Effect.try({
      try: () => Toml.parse(text.value) as TomlTable,
      catch: (error) =>
        error instanceof Toml.TomlError
          ? fail(`is not valid TOML: line ${error.line}, column ${error.column}: ${error.message.split("\n")[0]}`)
          : fail(`is not valid TOML: ${String(error)}`)
    })
    return { path, doc }
  })

/** What the file may contain: nested tables, scalar keys, and keys whose value another parser checks. */
export interface KnownKeys {
  readonly tables: ReadonlySet<string>
  readonly scalars: ReadonlySet<string>
  readonly structured: ReadonlySet<string>
}

/** Rejects a key the configuration does not have: a typo must not silently do nothing. */
export const checkKnownKeys = (file: ConfigFile, known: KnownKeys): Effect.Effect<void, ConfigInvalid> => {
  const all = [...known.tables, ...known.scalars, ...known.structured]
  const unknown = (path: string) => {
    const guess = closest(path, all)
    const hint = guess === undefined ? "" : ` (did you mean ${guess}?)`
    return new ConfigInvalid({
      message: `invalid config: unknown key ${path} in ${file.path}${hint}`,
      key: path,
      source: file.path
    })
  }
  const walk = (table: TomlTable, prefix: string): ConfigInvalid | undefined => {
    for (const [name, value] of Object.entries(table)) {
      const path = prefix === "" ? name : `${prefix}.${name}`
      // a quoted key with a dot ("server.port" = 1) is no key of ours, even if it reads like one
      if (name.includes(".")) return unknown(JSON.stringify(name))
      if (known.structured.has(path)) continue
      if (known.tables.has(path)) {
        if (!isTable(value)) {
          if (known.scalars.has(path)) continue // `geo = true`, the short form of a table
          return invalidValue(path, value, fileSource(file), "a table")
        }
        const inner = walk(value, path)
        if (inner !== undefined) return inner
        continue
      }
      if (!known.scalars.has(path)) return unknown(path)
    }
    return undefined
  }
  const error = walk(file.doc, "")
  return error === undefined ? Effect.void : Effect.fail(error)
}
