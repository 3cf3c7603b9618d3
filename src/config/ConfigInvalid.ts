import { Data } from "effect"

/**
 * Where a configuration value came from, named the way an operator would look for it:
 * the file's path, an environment variable's name, or a CLI flag (`--port`).
 */
export type ConfigSource =
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Env"; readonly name: string }
  | { readonly _tag: "Flag"; readonly name: string }

export const sourceName = (source: ConfigSource): string => {
  switch (source._tag) {
    case "File":
      return source.path
    case "Env":
      return source.name
    case "Flag":
      return `--${source.name}`
  }
}

/**
 * The configuration cannot be used. `message` names the key and its source, e.g.
 * `invalid config: server.port = "abc" (from GLIGABAO_PORT): expected an integer between 0 and 65535`.
 * A secret's value never appears in it.
 */
export class ConfigInvalid extends Data.TaggedError("ConfigInvalid")<{
  readonly message: string
  /** the TOML path of the key (`server.port`), or `config` for the file itself */
  readonly key: string
  /** the file path, environment variable or flag the value came from */
  readonly source: string
}> {}

/** Renders a value for an error message; a secret is never shown. */
export const showValue = (raw: unknown, secret: boolean): string => {
  if (secret) return "<redacted>"
  if (raw instanceof Date) return raw.toISOString()
  try {
    const json = JSON.stringify(raw)
    if (json === undefined) return String(raw)
    // a whole table in an error message is noise; its start is enough to spot it
    return json.length > 80 ? `${json.slice(0, 77)}...` : json
  } catch {
    return String(raw)
  }
}

export const invalidValue = (
  key: string,
  raw: unknown,
  source: ConfigSource,
  expected: string,
  secret = false
): ConfigInvalid =>
  new ConfigInvalid({
    message: `invalid config: ${key} = ${showValue(raw, secret)} (from ${sourceName(source)}): expected ${expected}`,
    key,
    source: sourceName(source)
  })

export const missingValue = (key: string, source: ConfigSource, expected: string): ConfigInvalid =>
  new ConfigInvalid({
    message: `invalid config: ${key} is missing (in ${sourceName(source)}): expected ${expected}`,
    key,
    source: sourceName(source)
  })
