import Database from "better-sqlite3"
import * as sqliteVec from "sqlite-vec"
const db = new Database(process.argv[2], { readonly: true })
sqliteVec.load(db)
const rows = db.prepare("SELECT index_name, embedding FROM gb_vectors_1536_floats WHERE rowid % 997 = 0 LIMIT 40").all()
const codesOnly = db.prepare("SELECT key FROM gb_vectors_1536_codes1 WHERE code MATCH vec_bit(?) AND k = ? AND index_name = ?")
const { binaryCode } = await import("/work/main/build/dist/layers/vectors/binaryCodes.js")
for (const k of [1, 30, 64, 120, 256, 512]) {
let tc=0
for (const r of rows) {
  const f = new Float32Array(Uint8Array.from(r.embedding).buffer)
  const code = binaryCode(f, 1536)
  let t=performance.now(); codesOnly.all(code, k, "dataset-1-edges"); tc+=performance.now()-t
}
console.log(`k ${k}: codes only ${(tc/rows.length).toFixed(2)} ms`)
}
