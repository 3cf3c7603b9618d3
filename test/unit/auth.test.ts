/**
 * Bearer tokens (src/auth/tokens.ts) and the bind check (src/auth/bind.ts): who a header stands
 * for, what each kind of caller may do, and where the server may listen without tokens.
 */
import { Redacted } from "effect"
import * as fc from "fast-check"
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { bindRefusal, isLoopback } from "../../src/auth/bind.js"
import { ADMIN_ONLY, adminRefusal, type Caller, identify, refusalFor, tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"

const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

const user = (secret: string, userId: string, kind: "plain" | "sha256" = "plain"): AuthToken => ({
  kind,
  secret: Redacted.make(kind === "sha256" ? sha256Hex(secret) : secret),
  admin: false,
  userId
})
const admin = (secret: string, kind: "plain" | "sha256" = "plain"): AuthToken => ({
  kind,
  secret: Redacted.make(kind === "sha256" ? sha256Hex(secret) : secret),
  admin: true
})

const TABLE = tokenTable([
  user("alice-token", "alice"),
  user("bob-token", "bob"),
  admin("admin-token"),
  // stored as its digest: the config holds sha256:<hex of "carol-token">
  user("carol-token", "carol", "sha256"),
  admin("root-token", "sha256")
])

const unauthenticated = (reason: RegExp) => ({ _tag: "Unauthenticated", reason: expect.stringMatching(reason) })

describe("identify", () => {
  it("accepts each configured token, plain or sha256, as its user or as an admin", () => {
    expect(identify(TABLE, "Bearer alice-token")).toEqual({ _tag: "User", userId: "alice" })
    expect(identify(TABLE, "Bearer bob-token")).toEqual({ _tag: "User", userId: "bob" })
    expect(identify(TABLE, "Bearer admin-token")).toEqual({ _tag: "Admin" })
    expect(identify(TABLE, "Bearer carol-token")).toEqual({ _tag: "User", userId: "carol" })
    expect(identify(TABLE, "Bearer root-token")).toEqual({ _tag: "Admin" })
  })

  it("the scheme is case-insensitive (RFC 7235) and spaces around the token are allowed", () => {
    expect(identify(TABLE, "bearer alice-token")).toEqual({ _tag: "User", userId: "alice" })
    expect(identify(TABLE, "BEARER alice-token")).toEqual({ _tag: "User", userId: "alice" })
    expect(identify(TABLE, "Bearer \t alice-token  ")).toEqual({ _tag: "User", userId: "alice" })
  })

  it("no header or a blank one: authentication required", () => {
    expect(identify(TABLE, undefined)).toEqual(unauthenticated(/authentication required/))
    expect(identify(TABLE, "")).toEqual(unauthenticated(/authentication required/))
    expect(identify(TABLE, "   ")).toEqual(unauthenticated(/authentication required/))
  })

  it("another scheme, or Bearer without exactly one token: a malformed header", () => {
    for (
      const header of [
        "Basic YWxpY2U6eA==",
        "alice-token",
        "Bearer",
        "Bearer ",
        "Bearer alice-token extra",
        "Token alice-token",
        "Beareralice-token"
      ]
    ) {
      expect(identify(TABLE, header), header).toEqual(unauthenticated(/must be Bearer/))
    }
  })

  it("a wrong token, a token's digest or a token of another case is not valid", () => {
    for (
      const token of [
        "nope",
        "alice-token2",
        "ALICE-TOKEN",
        "lice-token",
        sha256Hex("carol-token"),
        sha256Hex("alice-token"),
        `sha256:${sha256Hex("carol-token")}`
      ]
    ) {
      expect(identify(TABLE, `Bearer ${token}`), token).toEqual(unauthenticated(/not valid/))
    }
  })

  it("no tokens configured: authentication is off, every request is Open", () => {
    const off = tokenTable([])
    expect(off.enabled).toBe(false)
    for (const header of [undefined, "", "Bearer alice-token", "Basic x", "garbage"]) {
      expect(identify(off, header)).toEqual({ _tag: "Open" })
    }
  })

  it("the table holds digests, never the secrets", () => {
    const text = JSON.stringify(
      TABLE.entries.map((e) => ({ ...e, digest: e.digest.toString("utf8") + e.digest.toString("hex") }))
    )
    for (const secret of ["alice-token", "bob-token", "admin-token"]) expect(text).not.toContain(secret)
    expect(TABLE.entries.map((e) => e.digest.length)).toEqual([32, 32, 32, 32, 32])
  })

  it("property: accepts every configured token as its own caller, and nothing else", () => {
    // tokens as the config allows them: no whitespace
    const secret = fc.stringMatching(/^[!-~]{1,40}$/)
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({ secret, kind: fc.constantFrom("plain" as const, "sha256" as const), admin: fc.boolean() }),
          {
            minLength: 1,
            maxLength: 8,
            selector: (t) => t.secret
          }
        ),
        fc.array(secret, { maxLength: 20 }),
        (tokens, presented) => {
          const table = tokenTable(
            tokens.map((t, i) => (t.admin ? admin(t.secret, t.kind) : user(t.secret, `u${i}`, t.kind)))
          )
          tokens.forEach((t, i) => {
            const expected: Caller = t.admin ? { _tag: "Admin" } : { _tag: "User", userId: `u${i}` }
            expect(identify(table, `Bearer ${t.secret}`)).toEqual(expected)
          })
          for (const p of presented) {
            if (tokens.some((t) => t.secret === p)) continue
            expect(identify(table, `Bearer ${p}`)._tag).toBe("Unauthenticated")
          }
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("refusalFor and adminRefusal", () => {
  const open: Caller = { _tag: "Open" }
  const alice: Caller = { _tag: "User", userId: "alice" }
  const root: Caller = { _tag: "Admin" }

  it("Open may act for anyone and use the admin API", () => {
    expect(refusalFor(open, "alice")).toBeUndefined()
    expect(refusalFor(open, "bob")).toBeUndefined()
    expect(adminRefusal(open)).toBeUndefined()
  })

  it("a user acts for itself only, and never uses the admin API", () => {
    expect(refusalFor(alice, "alice")).toBeUndefined()
    expect(refusalFor(alice, "bob")).toMatch(/may not act for that user_id/)
    // user ids are compared exactly
    expect(refusalFor(alice, "Alice")).toBeDefined()
    expect(refusalFor(alice, "alice ")).toBeDefined()
    expect(adminRefusal(alice)).toMatch(/admin token/)
  })

  it("an admin uses the admin API only, not the user endpoints", () => {
    expect(adminRefusal(root)).toBeUndefined()
    expect(refusalFor(root, "alice")).toBe(ADMIN_ONLY)
  })

  it("the fail-closed caller (User with an empty id) may act for no real user", () => {
    const nobody: Caller = { _tag: "User", userId: "" }
    expect(refusalFor(nobody, "alice")).toBeDefined()
    expect(adminRefusal(nobody)).toBeDefined()
  })
})

describe("isLoopback and bindRefusal", () => {
  it("loopback addresses", () => {
    for (
      const host of [
        "127.0.0.1",
        "127.1.2.3",
        "::1",
        "[::1]",
        "localhost",
        "LOCALHOST",
        " 127.0.0.1 ",
        "::ffff:127.0.0.1"
      ]
    ) {
      expect(isLoopback(host), host).toBe(true)
    }
  })

  it("anything else is not loopback", () => {
    for (
      const host of [
        "0.0.0.0",
        "::",
        "[::]",
        "192.168.1.10",
        "10.0.0.1",
        "128.0.0.1",
        "127.0.0",
        "127.0.0.1.example.com",
        "localhost.example.com",
        "example.com",
        ""
      ]
    ) {
      expect(isLoopback(host), host).toBe(false)
    }
  })

  it("without auth, only loopback is allowed; the refusal says what to do", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) {
      expect(bindRefusal(host, false, false), host).toBeUndefined()
    }
    for (const host of ["0.0.0.0", "192.168.1.10"]) {
      const refusal = bindRefusal(host, false, false)
      expect(refusal).toContain(host)
      expect(refusal).toMatch(/\[auth\]/)
      expect(refusal).toMatch(/--insecure-bind/)
    }
  })

  it("with auth, or with --insecure-bind, any address is allowed", () => {
    for (const host of ["0.0.0.0", "192.168.1.10", "127.0.0.1"]) {
      expect(bindRefusal(host, true, false), host).toBeUndefined()
      expect(bindRefusal(host, false, true), host).toBeUndefined()
      expect(bindRefusal(host, true, true), host).toBeUndefined()
    }
  })
})
