import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import {
  type AppConfig,
  type ConfigFlags,
  defaultConfig,
  describeConfig,
  GLIGABAO_VERSION,
  imageDirFor,
  loadConfig
} from "../src/Config.js"
import { DEFAULT_PRICES } from "../src/kernel/cost.js"

const repoFile = (name: string) => fileURLToPath(new URL(`../${name}`, import.meta.url))

type Env = Record<string, string | undefined>

/** A scratch directory for this test, removed when it ends. */
const tempDir = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => Effect.orDie(fs.makeTempDirectoryScoped({ prefix: "gligabao-config-" }))
)

/** Loads with `toml` as the file (none when undefined); the default path never reaches the repo's file. */
const load = (toml: string | undefined, env: Env = {}, flags: ConfigFlags = {}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* tempDir
    const path = `${dir}/gligabao.toml`
    if (toml !== undefined) yield* Effect.orDie(fs.writeFileString(path, toml))
    return yield* loadConfig(flags, env, { defaultPath: path, workingDirectory: dir })
  })

const loadError = (toml: string | undefined, env: Env = {}, flags: ConfigFlags = {}) =>
  Effect.flip(load(toml, env, flags))

const withoutFile = (config: AppConfig) => ({ ...config, configFile: Option.none() })

layer(NodeContext.layer)("Config", (it) => {
  describe("defaults and the file", () => {
    it.scoped("without a file every key has its default", () =>
      Effect.gen(function*() {
        const config = yield* load(undefined)
        expect(config).toEqual(defaultConfig)
        expect(config.server).toEqual({
          host: "127.0.0.1",
          port: 8080,
          allowedHosts: [],
          allowedOrigins: [],
          corsOrigins: []
        })
        expect(config.database.path).toBe("data/gligabao.db")
        expect(config.imageDir).toBe("data/gligabao.images")
        expect(config.llm.defaultModel).toBe("claude-haiku-5-5")
        expect(config.auth.tokens).toEqual([])
      }))

    it.effect("the committed gligabao.toml holds exactly the defaults", () =>
      Effect.gen(function*() {
        const path = repoFile("gligabao.toml")
        // a checkout's own data/ or build/ does not change the defaults compared here
        const config = yield* loadConfig({ config: path }, {}, { workingDirectory: "/nonexistent" })
        expect(config.configFile).toEqual(Option.some(path))
        expect(withoutFile(config)).toEqual(defaultConfig)
      }))

    it.scoped("server.allowed_hosts, allowed_origins and cors_origins: TOML arrays, or comma-separated variables", () =>
      Effect.gen(function*() {
        const toml = `[server]\nallowed_hosts = ["memory.example.com"]\nallowed_origins = ["https://app.example.com"]\n`
        expect((yield* load(toml)).server).toMatchObject({
          allowedHosts: ["memory.example.com"],
          allowedOrigins: ["https://app.example.com"],
          corsOrigins: []
        })
        const fromEnv = yield* load(toml, {
          GLIGABAO_CORS_ORIGINS: "https://a.example.com, http://localhost:5173",
          GLIGABAO_ALLOWED_HOSTS: "proxy.example.com"
        })
        expect(fromEnv.server.corsOrigins).toEqual(["https://a.example.com", "http://localhost:5173"])
        expect(fromEnv.server.allowedHosts).toEqual(["proxy.example.com"])
        const bad = yield* loadError(toml, { GLIGABAO_CORS_ORIGINS: "https://a.example.com/path" })
        expect(bad.message).toMatch(/GLIGABAO_CORS_ORIGINS/)
        expect(bad.message).toMatch(/origin/)
        const notList = yield* loadError(`[server]\nallowed_origins = "https://app.example.com"\n`)
        expect(notList.message).toMatch(/server\.allowed_origins/)
      }))

    it.effect("the default User-Agent carries the package's version", () =>
      Effect.sync(() => {
        const pkg = JSON.parse(readFileSync(repoFile("package.json"), "utf8")) as { version: string }
        expect(GLIGABAO_VERSION).toBe(pkg.version)
        expect(defaultConfig.geo.userAgent).toContain(`gligabao/${pkg.version}`)
      }))

    it.scoped("a missing file named by --config is an error naming the path", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const error = yield* Effect.flip(loadConfig({ config: `${dir}/nope.toml` }, {}))
        expect(error._tag).toBe("ConfigInvalid")
        expect(error.message).toBe(`invalid config: config file ${dir}/nope.toml (from --config) does not exist`)
      }))

    it.scoped("a missing file named by GLIGABAO_CONFIG is an error too", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const error = yield* Effect.flip(loadConfig({}, { GLIGABAO_CONFIG: `${dir}/nope.toml` }))
        expect(error.message).toContain(`${dir}/nope.toml (from GLIGABAO_CONFIG) does not exist`)
      }))

    it.scoped("a file that is not TOML fails with its path and line", () =>
      Effect.gen(function*() {
        const error = yield* loadError("chunk_size = 1024\nport = \n")
        expect(error.message).toMatch(/^invalid config: config file .*gligabao\.toml is not valid TOML: line 2, column/)
      }))

    it.scoped("--config names the file to read", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        yield* fs.writeFileString(`${dir}/other.toml`, "chunk_size = 2048\n")
        const config = yield* loadConfig({ config: `${dir}/other.toml` }, {}, { defaultPath: `${dir}/missing.toml` })
        expect(config.chunkSize).toBe(2048)
        expect(config.configFile).toEqual(Option.some(`${dir}/other.toml`))
      }))
  })

  describe("precedence: file < environment < flags", () => {
    const toml = `[server]\nhost = "10.0.0.1"\nport = 1111\n[database]\npath = "data/file.db"\n`

    it.scoped("the file overrides the defaults", () =>
      Effect.gen(function*() {
        const config = yield* load(toml)
        expect(config.server).toEqual({
          host: "10.0.0.1",
          port: 1111,
          allowedHosts: [],
          allowedOrigins: [],
          corsOrigins: []
        })
        expect(config.database.path).toBe("data/file.db")
        expect(config.imageDir).toBe("data/file.images")
      }))

    it.scoped("the environment overrides the file", () =>
      Effect.gen(function*() {
        const config = yield* load(toml, { GLIGABAO_HOST: "10.0.0.2", GLIGABAO_PORT: "2222", GLIGABAO_DB: "env.db" })
        expect(config.server).toEqual({
          host: "10.0.0.2",
          port: 2222,
          allowedHosts: [],
          allowedOrigins: [],
          corsOrigins: []
        })
        expect(config.database.path).toBe("env.db")
        expect(config.imageDir).toBe("env.images")
      }))

    it.scoped("flags override the environment", () =>
      Effect.gen(function*() {
        const config = yield* load(
          toml,
          { GLIGABAO_HOST: "10.0.0.2", GLIGABAO_PORT: "2222", GLIGABAO_DB: "env.db", GLIGABAO_IMAGE_DIR: "env-images" },
          { host: "0.0.0.0", port: 0, db: "flag.db", imageDir: "flag-images" }
        )
        expect(config.server).toEqual({
          host: "0.0.0.0",
          port: 0,
          allowedHosts: [],
          allowedOrigins: [],
          corsOrigins: []
        })
        expect(config.database.path).toBe("flag.db")
        expect(config.imageDir).toBe("flag-images")
      }))

    it.scoped("GLIGABAO_PORT wins over PORT, and PORT over the file", () =>
      Effect.gen(function*() {
        expect((yield* load(toml, { PORT: "3000" })).server.port).toBe(3000)
        expect((yield* load(toml, { PORT: "3000", GLIGABAO_PORT: "4000" })).server.port).toBe(4000)
      }))

    it.scoped("an empty environment variable counts as unset", () =>
      Effect.gen(function*() {
        const config = yield* load(toml, { GLIGABAO_PORT: "", PORT: "  ", ANTHROPIC_API_KEY: "" })
        expect(config.server.port).toBe(1111)
        expect(config.anthropicApiKey).toEqual(Option.none())
      }))

    it.scoped("database.url selects PostgreSQL; DATABASE_URL and --database-url override it", () =>
      Effect.gen(function*() {
        const file = `[database]\nurl = "postgres://file@127.0.0.1/db"\n`
        const fromFile = yield* load(file)
        expect(Option.map(fromFile.database.url, Redacted.value)).toEqual(Option.some("postgres://file@127.0.0.1/db"))
        const fromEnv = yield* load(file, { DATABASE_URL: "postgresql://env@127.0.0.1/db" })
        expect(Option.map(fromEnv.database.url, Redacted.value)).toEqual(Option.some("postgresql://env@127.0.0.1/db"))
        const fromFlag = yield* load(file, { DATABASE_URL: "postgresql://env@127.0.0.1/db" }, {
          databaseUrl: "postgres://flag@127.0.0.1/db"
        })
        expect(Option.map(fromFlag.database.url, Redacted.value)).toEqual(Option.some("postgres://flag@127.0.0.1/db"))
      }))
  })

  describe("values", () => {
    it.scoped("vector_store = \"chromem\" is the embedded sqlite store", () =>
      Effect.gen(function*() {
        expect((yield* load(`vector_store = "chromem"\n`)).vectorStore).toBe("sqlite")
        expect((yield* load(undefined, { GLIGABAO_VECTOR_STORE: "chromem" })).vectorStore).toBe("sqlite")
        expect((yield* load(`vector_store = "memory"\n`)).vectorStore).toBe("memory")
      }))

    it.scoped("vector_store defaults to \"postgres\" with database.url; sqlite and pinecone stay selectable", () =>
      Effect.gen(function*() {
        const url = { DATABASE_URL: "postgres://u@127.0.0.1/db" }
        expect((yield* load(undefined)).vectorStore).toBe("sqlite")
        expect((yield* load(undefined, url)).vectorStore).toBe("postgres")
        expect((yield* load(`vector_store = "sqlite"\n`, url)).vectorStore).toBe("sqlite")
        expect((yield* load(undefined, { ...url, GLIGABAO_VECTOR_STORE: "memory" })).vectorStore).toBe("memory")
        const pinecone = { ...url, PINECONE_API_KEY: "k", PINECONE_INDEX_HOST: "https://index.example" }
        expect((yield* load(`vector_store = "pinecone"\n`, pinecone)).vectorStore).toBe("pinecone")
        const error = yield* loadError(`vector_store = "postgres"\n`)
        expect(error.message).toContain(`vector_store is "postgres" but database.url (or DATABASE_URL) is not set`)
      }))

    it.scoped("a bad value in the file names the key and the file", () =>
      Effect.gen(function*() {
        const error = yield* loadError(`[server]\nport = "abc"\n`)
        expect(error.message).toMatch(
          /^invalid config: server\.port = "abc" \(from .*gligabao\.toml\): expected an integer between 0 and 65535$/
        )
        expect(error.key).toBe("server.port")
        expect(error.source).toMatch(/gligabao\.toml$/)
      }))

    it.scoped("a bad value in the environment names the variable", () =>
      Effect.gen(function*() {
        const error = yield* loadError(undefined, { GLIGABAO_PORT: "abc" })
        expect(error.message).toBe(
          "invalid config: server.port = \"abc\" (from GLIGABAO_PORT): expected an integer between 0 and 65535"
        )
        const overlap = yield* loadError(undefined, { GLIGABAO_CHUNK_OVERLAP_PERCENT: "60" })
        expect(overlap.message).toBe(
          "invalid config: chunk_overlap_percent = \"60\" (from GLIGABAO_CHUNK_OVERLAP_PERCENT): expected an integer between 0 and 50"
        )
      }))

    it.scoped("a bad flag names the flag", () =>
      Effect.gen(function*() {
        const error = yield* loadError(undefined, {}, { port: 70000 })
        expect(error.message).toBe(
          "invalid config: server.port = 70000 (from --port): expected an integer between 0 and 65535"
        )
      }))

    it.scoped("a bad value in the file fails even when the environment overrides it", () =>
      Effect.gen(function*() {
        const error = yield* loadError(`chunk_size = 10\n`, { GLIGABAO_CHUNK_SIZE: "2048" })
        expect(error.message).toContain("chunk_size = 10 (from")
        expect(error.message).toContain("expected an integer >= 64")
      }))

    it.scoped("other checked keys: enums, URLs, model names", () =>
      Effect.gen(function*() {
        expect((yield* loadError(`log_level = "loud"\n`)).message).toContain(
          "log_level = \"loud\" (from"
        )
        expect((yield* loadError(undefined, { GLIGABAO_LLM_PROVIDER: "mistral" })).message).toBe(
          "invalid config: llm.provider = \"mistral\" (from GLIGABAO_LLM_PROVIDER): expected one of \"anthropic\", \"openai\""
        )
        expect((yield* loadError(undefined, { JEV_URL: "ftp://jev" })).message).toContain(
          "expected an http:// or https:// URL"
        )
        expect((yield* loadError(`[llm]\ndefault_model = "has space"\n`)).message).toContain("llm.default_model")
        expect((yield* load(undefined, { GLIGABAO_LOG_LEVEL: "warn" })).logLevel).toBe("warning")
      }))

    it.scoped("environment numbers and booleans are parsed from text; file values must be typed", () =>
      Effect.gen(function*() {
        const config = yield* load(undefined, { GLIGABAO_GEO_REQUESTS_PER_SECOND: "0.5", GLIGABAO_GEO: "yes" })
        expect(config.geo.requestsPerSecond).toBe(0.5)
        expect(config.geo.enabled).toBe(true)
        expect((yield* loadError(`chunk_size = "2048"\n`)).message).toContain("chunk_size = \"2048\"")
      }))
  })

  describe("unknown keys", () => {
    it.scoped("an unknown key in a table is rejected with a suggestion", () =>
      Effect.gen(function*() {
        const error = yield* loadError(`[server]\nprot = 9000\n`)
        expect(error.message).toMatch(
          /^invalid config: unknown key server\.prot in .*gligabao\.toml \(did you mean server\.port\?\)$/
        )
        expect(error.key).toBe("server.prot")
      }))

    it.scoped("an unknown top-level key or table is rejected", () =>
      Effect.gen(function*() {
        expect((yield* loadError(`chunksize = 10\n`)).message).toContain("unknown key chunksize")
        expect((yield* loadError(`[serve]\nport = 1\n`)).message).toContain("unknown key serve")
        expect((yield* loadError(`"server.port" = 1\n`)).message).toContain("unknown key \"server.port\"")
      }))

    it.scoped("a table given as a scalar is rejected", () =>
      Effect.gen(function*() {
        expect((yield* loadError(`server = 1\n`)).message).toContain("server = 1 (from")
      }))
  })

  describe("secrets", () => {
    const secrets = {
      ANTHROPIC_API_KEY: "sk-ant-SECRET-1",
      OPENAI_API_KEY: "sk-openai-SECRET-2",
      PINECONE_API_KEY: "pc-SECRET-3",
      JEV_API_KEY: "jev-SECRET-4",
      DATABASE_URL: "postgres://user:SECRET-5@127.0.0.1/db",
      GLIGABAO_LLM_API_KEY: "llm-SECRET-6",
      GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: "tok-SECRET-7-0123456789abcdef", user_id: "alice" }])
    }

    it.scoped("are Redacted and absent from describeConfig and from the config's JSON", () =>
      Effect.gen(function*() {
        const config = yield* load(undefined, secrets)
        expect(Option.map(config.anthropicApiKey, Redacted.value)).toEqual(Option.some(secrets.ANTHROPIC_API_KEY))
        expect(Option.map(config.openaiApiKey, Redacted.value)).toEqual(Option.some(secrets.OPENAI_API_KEY))
        expect(Option.map(config.pinecone.apiKey, Redacted.value)).toEqual(Option.some(secrets.PINECONE_API_KEY))
        expect(Option.map(config.jevApiKey, Redacted.value)).toEqual(Option.some(secrets.JEV_API_KEY))
        expect(Option.map(config.llm.apiKey, Redacted.value)).toEqual(Option.some(secrets.GLIGABAO_LLM_API_KEY))
        const description = describeConfig(config)
        expect(description["anthropic_api_key"]).toBe("set")
        expect(description["database"]).toBe("postgresql (database.url set)")
        expect(description["auth.tokens"]).toBe("1 tokens (0 admin)")
        for (const text of [JSON.stringify(description), JSON.stringify(config), String(config.anthropicApiKey)]) {
          expect(text).not.toMatch(/SECRET/)
        }
      }))

    it.scoped("describeConfig masks credentials embedded in a base URL", () =>
      Effect.gen(function*() {
        const config = yield* load(undefined, { GLIGABAO_LLM_BASE_URL: "http://proxy:SECRET@127.0.0.1:9/v1" })
        expect(describeConfig(config)["llm.base_url"]).toBe("http://redacted@127.0.0.1:9/v1")
      }))

    it.scoped("a bad secret value is not echoed in the error", () =>
      Effect.gen(function*() {
        const error = yield* loadError(undefined, { DATABASE_URL: "mysql://user:SECRET@host/db" })
        expect(error.message).toBe(
          "invalid config: database.url = <redacted> (from DATABASE_URL): expected a postgres:// or postgresql:// URL"
        )
        const auth = yield* loadError(`[auth]\ntokens = [{ token = "has SECRET space", user_id = "a" }]\n`)
        expect(auth.message).toContain("auth.tokens[0].token = <redacted>")
        expect(auth.message).not.toContain("SECRET")
      }))

    it.scoped("an empty secret in the file (\"\") counts as unset", () =>
      Effect.gen(function*() {
        const config = yield* load(`anthropic_api_key = ""\n`)
        expect(config.anthropicApiKey).toEqual(Option.none())
      }))
  })

  describe("llm", () => {
    it.scoped("the LLM key falls back to the provider's own key", () =>
      Effect.gen(function*() {
        const env = { ANTHROPIC_API_KEY: "a-key", OPENAI_API_KEY: "o-key" }
        const anthropic = yield* load(undefined, env)
        expect(Option.map(anthropic.llm.apiKey, Redacted.value)).toEqual(Option.some("a-key"))
        const openai = yield* load(`[llm]\nprovider = "openai"\n`, env)
        expect(Option.map(openai.llm.apiKey, Redacted.value)).toEqual(Option.some("o-key"))
        const own = yield* load(`[llm]\nprovider = "openai"\napi_key = "local"\n`, env)
        expect(Option.map(own.llm.apiKey, Redacted.value)).toEqual(Option.some("local"))
      }))

    it.scoped("base_url reads the provider's variable, and GLIGABAO_LLM_BASE_URL wins", () =>
      Effect.gen(function*() {
        const env = { ANTHROPIC_BASE_URL: "http://127.0.0.1:1/a", OPENAI_BASE_URL: "http://127.0.0.1:2/v1" }
        expect((yield* load(undefined, env)).llm.baseUrl).toEqual(Option.some("http://127.0.0.1:1/a"))
        const openai = yield* load(undefined, { ...env, GLIGABAO_LLM_PROVIDER: "openai" })
        expect(openai.llm.baseUrl).toEqual(Option.some("http://127.0.0.1:2/v1"))
        expect(openai.embeddingBaseUrl).toEqual(Option.some("http://127.0.0.1:2/v1"))
        const ours = yield* load(undefined, { ...env, GLIGABAO_LLM_BASE_URL: "http://127.0.0.1:3/" })
        expect(ours.llm.baseUrl).toEqual(Option.some("http://127.0.0.1:3/"))
        expect(ours.embeddingBaseUrl).toEqual(Option.some("http://127.0.0.1:2/v1"))
      }))
  })

  describe("geo", () => {
    it.scoped("geo = true and [geo] enabled = true both enable it", () =>
      Effect.gen(function*() {
        expect((yield* load(`geo = true\n`)).geo).toEqual({ ...defaultConfig.geo, enabled: true })
        const table = yield* load(
          `[geo]\nenabled = true\nbase_url = "http://127.0.0.1:9/"\nuser_agent = "acme/1 (ops@acme.test)"\nrequests_per_second = 2\n`
        )
        expect(table.geo).toEqual({
          enabled: true,
          baseUrl: "http://127.0.0.1:9/",
          userAgent: "acme/1 (ops@acme.test)",
          requestsPerSecond: 2
        })
        expect((yield* load(`geo = false\n`)).geo.enabled).toBe(false)
      }))

    it.scoped("--geo enables it; an absent flag (false) leaves the file's value", () =>
      Effect.gen(function*() {
        expect((yield* load(undefined, {}, { geo: true })).geo.enabled).toBe(true)
        expect((yield* load(`geo = true\n`, {}, { geo: false })).geo.enabled).toBe(true)
        expect((yield* load(undefined, { GLIGABAO_GEO: "true" })).geo.enabled).toBe(true)
      }))

    it.scoped("geo as anything else is rejected", () =>
      Effect.gen(function*() {
        expect((yield* loadError(`geo = "yes"\n`)).message).toContain("geo = \"yes\" (from")
        expect((yield* loadError(`[geo]\nrequests_per_second = 0\n`)).message).toContain("expected a number > 0")
        expect((yield* loadError(`[geo]\nuser_agnet = "x"\n`)).message).toContain("unknown key geo.user_agnet")
      }))
  })

  describe("[prices]", () => {
    it.scoped("entries are merged field by field over the built-in prices", () =>
      Effect.gen(function*() {
        const config = yield* load(
          `[prices."claude-haiku-4-5"]\ninput = 2\n\n[prices."my-model.v2"]\ninput = 0.5\noutput = 1.5\ncache_read = 0.05\nper_1k_searches = 0\n`
        )
        expect(config.prices["claude-haiku-4-5"]).toEqual({ ...DEFAULT_PRICES["claude-haiku-4-5"], input: 2 })
        expect(config.prices["my-model.v2"]).toEqual({ input: 0.5, output: 1.5, cache_read: 0.05, per_1k_searches: 0 })
        expect(config.prices["claude-opus-4-5"]).toEqual(DEFAULT_PRICES["claude-opus-4-5"])
      }))

    it.scoped("bad entries are rejected with the model named", () =>
      Effect.gen(function*() {
        expect((yield* loadError(`[prices.new-model]\ninput = 1\n`)).message).toContain(
          "prices.new-model.output is missing"
        )
        expect((yield* loadError(`[prices."claude-haiku-4-5"]\ninput = -1\n`)).message).toContain(
          "prices.claude-haiku-4-5.input = -1 (from"
        )
        expect((yield* loadError(`[prices."my-model.v2"]\ninput = 1\noutput = "free"\n`)).message).toContain(
          "prices.\"my-model.v2\".output = \"free\" (from"
        )
        expect((yield* loadError(`[prices.m]\ninput = 1\noutput = 1\ncached = 1\n`)).message).toContain(
          "unknown key prices.m.cached"
        )
        expect((yield* loadError(`prices = 3\n`)).message).toContain("prices = 3 (from")
      }))
  })

  describe("[[timeseries.providers]]", () => {
    it.scoped("providers are read, kind defaulting to prices", () =>
      Effect.gen(function*() {
        const config = yield* load(
          `[[timeseries.providers]]\nname = "stocks"\ndescription = "Daily closes"\nbase_url = "http://127.0.0.1:7/"\n\n[[timeseries.providers]]\nname = "fx"\nkind = "prices"\ndescription = "Currencies"\nbase_url = "https://fx.example"\n`
        )
        expect(config.timeseries.providers).toEqual([
          { name: "stocks", kind: "prices", description: "Daily closes", baseUrl: "http://127.0.0.1:7/" },
          { name: "fx", kind: "prices", description: "Currencies", baseUrl: "https://fx.example" }
        ])
        expect(describeConfig(config)["timeseries.providers"]).toBe("stocks, fx")
      }))

    it.scoped("duplicate names, missing fields, unknown kinds and fields are rejected", () =>
      Effect.gen(function*() {
        const provider = (extra: string) =>
          `[[timeseries.providers]]\nname = "a"\ndescription = "d"\nbase_url = "https://x.example"\n${extra}`
        expect((yield* loadError(provider("") + provider(""))).message).toContain(
          "timeseries.providers[1].name = \"a\" (from"
        )
        expect((yield* loadError(`[[timeseries.providers]]\nname = "a"\ndescription = "d"\n`)).message).toContain(
          "timeseries.providers[0].base_url is missing"
        )
        expect((yield* loadError(provider(`kind = "weather"\n`))).message).toContain("timeseries.providers[0].kind")
        expect((yield* loadError(provider(`url = "x"\n`))).message).toContain("unknown key timeseries.providers[0].url")
        expect((yield* loadError(`[timeseries]\nprovider = []\n`)).message).toContain("unknown key timeseries.provider")
      }))
  })

  describe("[auth] tokens", () => {
    const digest = "5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8"

    it.scoped("user and admin tokens, plain or sha256 (normalized to lower case)", () =>
      Effect.gen(function*() {
        const config = yield* load(
          `[auth]\ntokens = [\n  { token = "sha256:${digest}", user_id = "alice" },\n  { token = "root-token-0123456789abcdef", admin = true },\n  { token = "bob-token-0123456789abcdefg", user_id = "bob", admin = false },\n]\n`
        )
        const tokens = config.auth.tokens.map((t) => ({ ...t, secret: Redacted.value(t.secret) }))
        expect(tokens).toEqual([
          { kind: "sha256", secret: digest.toLowerCase(), admin: false, userId: "alice" },
          { kind: "plain", secret: "root-token-0123456789abcdef", admin: true },
          { kind: "plain", secret: "bob-token-0123456789abcdefg", admin: false, userId: "bob" }
        ])
      }))

    it.scoped("[[auth.tokens]] tables work too, and no tokens means auth is off", () =>
      Effect.gen(function*() {
        const config = yield* load(`[[auth.tokens]]\ntoken = "t1-0123456789abcdefghijklmn"\nuser_id = "u"\n`)
        expect(config.auth.tokens).toHaveLength(1)
        expect((yield* load(`[auth]\ntokens = []\n`)).auth.tokens).toEqual([])
        expect(describeConfig(yield* load(`[auth]\n`))["auth.tokens"]).toBe("off")
      }))

    it.scoped("malformed entries are rejected, naming the entry", () =>
      Effect.gen(function*() {
        const entry = (body: string) => `[auth]\ntokens = [{ ${body} }]\n`
        expect((yield* loadError(entry(`token = "t-0123456789abcdefghijklmno", user_id = "a", admin = true`))).message)
          .toContain(
            "auth.tokens[0] (from"
          )
        expect((yield* loadError(entry(`token = "t-0123456789abcdefghijklmno", user_id = "a", admin = true`))).message)
          .toContain("not both")
        expect((yield* loadError(entry(`token = "t-0123456789abcdefghijklmno"`))).message).toContain(
          "expected user_id = \"...\" or admin = true"
        )
        expect((yield* loadError(entry(`user_id = "a"`))).message).toContain("auth.tokens[0].token is missing")
        expect((yield* loadError(entry(`token = "sha256:abc", user_id = "a"`))).message).toContain(
          "auth.tokens[0].token = <redacted>"
        )
        expect((yield* loadError(entry(`token = "t-0123456789abcdefghijklmno", user = "a"`))).message).toContain(
          "unknown key auth.tokens[0].user"
        )
        expect(
          (yield* loadError(
            `[auth]\ntokens = [{ token = "same-0123456789abcdefghijk", user_id = "a" }, { token = "same-0123456789abcdefghijk", admin = true }]\n`
          ))
            .message
        ).toContain("auth.tokens[1].token = <redacted>")
      }))

    it.scoped("a plain token shorter than 24 characters stops startup; a sha256 one is not affected", () =>
      Effect.gen(function*() {
        const short = yield* loadError(`[auth]\ntokens = [{ token = "abcde", user_id = "a" }]\n`)
        expect(short.message).toContain("auth.tokens[0].token = <redacted>")
        expect(short.message).toContain("at least 24 characters")
        expect(short.message).not.toContain("abcde")
        const ok = yield* load(`[auth]\ntokens = [{ token = "sha256:${digest}", user_id = "a" }]\n`)
        expect(ok.auth.tokens).toHaveLength(1)
        expect((yield* load(`[auth]\ntokens = [{ token = "${"x".repeat(24)}", user_id = "a" }]\n`)).auth.tokens)
          .toHaveLength(1)
      }))

    it.scoped("GLIGABAO_AUTH_TOKENS (JSON) replaces the file's tokens; bad JSON is not echoed", () =>
      Effect.gen(function*() {
        const config = yield* load(`[auth]\ntokens = [{ token = "file-0123456789abcdefghijk", admin = true }]\n`, {
          GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: "env-0123456789abcdefghijkl", user_id: "carol" }])
        })
        expect(config.auth.tokens.map((t) => [Redacted.value(t.secret), t.admin])).toEqual([[
          "env-0123456789abcdefghijkl",
          false
        ]])
        const error = yield* loadError(undefined, { GLIGABAO_AUTH_TOKENS: "[{token: SECRET" })
        expect(error.message).toMatch(/^invalid config: auth\.tokens = <redacted> \(from GLIGABAO_AUTH_TOKENS\)/)
      }))
  })

  describe("pinecone", () => {
    it.scoped("vector_store = pinecone needs its key and index host", () =>
      Effect.gen(function*() {
        expect((yield* loadError(`vector_store = "pinecone"\n`)).message).toContain(
          "pinecone.api_key (or PINECONE_API_KEY)"
        )
        expect((yield* loadError(`vector_store = "pinecone"\n`, { PINECONE_API_KEY: "k" })).message).toContain(
          "pinecone.index_host"
        )
        const config = yield* load(`vector_store = "pinecone"\n[pinecone]\nnamespace_prefix = "prod-"\n`, {
          PINECONE_API_KEY: "k",
          PINECONE_INDEX_HOST: "idx-1.svc.pinecone.io"
        })
        expect(config.pinecone.indexHost).toEqual(Option.some("https://idx-1.svc.pinecone.io"))
        expect(config.pinecone.namespacePrefix).toBe("prod-")
      }))
  })

  describe("remember, logging", () => {
    it.scoped("[remember] and log keys are read from the file and the environment", () =>
      Effect.gen(function*() {
        const config = yield* load(
          `log_format = "json"\n[remember]\nconcurrency = 8\nlookahead = 6\nmax_candidates = 20\nsimilarity_threshold = 0.8\n`,
          {
            GLIGABAO_REMEMBER_CONCURRENCY: "2",
            GLIGABAO_REMEMBER_SIMILARITY_TOP_K: "5",
            GLIGABAO_REMEMBER_FACT_SIMILARITY_THRESHOLD: "0.7",
            GLIGABAO_REMEMBER_RETRY_DELAY_MS: "50"
          }
        )
        expect(config.remember).toEqual({
          concurrency: 2,
          maxAttempts: 3,
          retryDelayMs: 50,
          lookahead: 6,
          idempotencyTtlHours: 24,
          maxCandidates: 20,
          similarityThreshold: 0.8,
          similarityTopK: 5,
          factSimilarityThreshold: 0.7
        })
        expect((yield* loadError(`[remember]\nfact_similarity_threshold = -0.1\n`)).message).toContain(
          "remember.fact_similarity_threshold"
        )
        expect((yield* loadError(`[remember]\nsimilarity_threshold = 1.5\n`)).message).toContain(
          "remember.similarity_threshold"
        )
        expect(config.logFormat).toBe("json")
        expect((yield* loadError(`[remember]\nconcurrency = 0\n`)).message).toContain("remember.concurrency = 0")
      }))
  })
})

describe("imageDirFor", () => {
  it.each([
    ["data/gligabao.db", "data/gligabao.images"],
    ["data.v2/store", "data.v2/store.images"],
    ["/var/lib/g/.hidden", "/var/lib/g/.hidden.images"],
    ["a.b.sqlite", "a.b.images"]
  ])("%s -> %s", (path, expected) => {
    expect(imageDirFor(path)).toBe(expected)
  })
})
