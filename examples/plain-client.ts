/**
 * gligabao from plain TypeScript, without Effect: remember a text, search it, read an error.
 * Start a server (`npx gligabao serve`), then `GLIGABAO_URL=http://127.0.0.1:8080 npx tsx
 * examples/plain-client.ts` (GLIGABAO_TOKEN: a token of the server's [auth] for alice).
 */
import { Gligabao, GligabaoError } from "gligabao/client"

const gligabao = new Gligabao({
  baseUrl: process.env.GLIGABAO_URL ?? "http://127.0.0.1:8080",
  token: process.env.GLIGABAO_TOKEN
})

async function main() {
  const stored = await gligabao.remember({ user_id: "alice", text: "Alice Smith lives in Paris." })
  console.log(`remembered in run ${stored.remember_run_id}`)

  const { facts } = await gligabao.search({ user_id: "alice", query: "Where does Alice live?" })
  for (const fact of facts) console.log(`${fact.description} (since ${fact.valid_at ?? "an unknown time"})`)

  try {
    await gligabao.search({ user_id: "alice", query: "" })
  } catch (error) {
    // every answer outside 2xx: the status and the server's error text
    if (!(error instanceof GligabaoError)) throw error
    console.log(`${error.status}: ${error.error}`)
  }
}

main()
