/**
 * Stage resolve_edges: what happens to each new fact against the candidates load_candidates
 * found (spec: Candidate facts; contracts section 3): exact repeats and the facts of a dataset
 * schema's exclusive relations in code (docs/SCHEMA.md), the rest by the model.
 */
import { Effect, Either } from "effect"
import { LlmFailed, type LlmUnavailable } from "../../domain/Errors.js"
import type { EdgeWithNames } from "../../domain/Rows.js"
import { exclusiveContradictions } from "../../kernel/datasetSchema.js"
import {
  exactRepeats,
  type NewFact,
  planReconciliation,
  type ReconciliationPlan,
  type StoredFact
} from "../../kernel/temporal.js"
import { countTokens } from "../../kernel/tokenizer.js"
import { type CallContext, callLlm } from "../ModelCalls.js"
import {
  buildResolveEdgesPrompt,
  fitExistingFacts,
  parseResolveEdges,
  RESOLVE_EDGES_ANSWER,
  RESOLVE_EDGES_MAX_TOKENS,
  RESOLVE_EDGES_MIN_SHOWN,
  RESOLVE_EDGES_PROMPT_BUDGET
} from "../prompts/resolveEdges.js"
import { type Candidates, foundVia, identity, type ResolvedFact } from "./candidates.js"
import type { ModelChoice } from "./extract.js"
import { callContext, type RunContext } from "./RunContext.js"

export interface Resolution {
  readonly plan: ReconciliationPlan
  /** whether the model was asked (false when every fact was an exact repeat or nothing was stored) */
  readonly calledModel: boolean
  readonly ignored: ReadonlyArray<string>
}

const toNewFacts = (resolved: ReadonlyArray<ResolvedFact>): Array<NewFact> =>
  resolved.map((r, index) => ({
    index,
    source_key: identity(r.source),
    target_key: identity(r.target),
    relation: r.edge.relation,
    valid_at: r.edge.valid_at,
    invalid_at: r.edge.invalid_at
  }))

const toStoredFacts = (
  facts: ReadonlyArray<EdgeWithNames>,
  statedEnds: ReadonlyMap<number, string | null>
): Array<StoredFact> =>
  facts.map((f) => ({
    ...(statedEnds.has(f.id) ? { stated_invalid_at: statedEnds.get(f.id)! } : {}),
    id: f.id,
    source_key: `id:${f.source_id}`,
    target_key: `id:${f.target_id}`,
    relation: f.relation,
    valid_at: f.valid_at,
    invalid_at: f.invalid_at,
    expired_at: f.expired_at
  }))

/**
 * The stored facts worth showing the model, most relevant first: those sharing both endpoints
 * with a new fact or found by their meaning, then one (an entity found by similarity counts as
 * one), newest first within each. Facts a new fact repeats exactly are left out: code merges those.
 */
export const rankForPrompt = (
  candidates: Candidates,
  open: ReadonlyArray<NewFact>,
  exactIds: ReadonlySet<number>
): Array<EdgeWithNames> => {
  const keyById = new Map(candidates.storedEntities.map((e) => [e.id, e.name_key] as const))
  const keyOf = (id: number) => keyById.get(id) ?? `id:${id}`
  const pairs = open.map((f) => {
    const edge = candidates.resolved[f.index]!.edge
    return new Set([edge.source_key, edge.target_key])
  })
  const score = (c: EdgeWithNames): number => {
    const ends = [...new Set([keyOf(c.source_id), keyOf(c.target_id)])]
    const shared = Math.max(0, ...pairs.map((p) => ends.filter((k) => p.has(k)).length))
    const by = candidates.foundBy.get(c.id)
    if (foundVia(by, "similar_fact")) return Math.max(shared, 2)
    return foundVia(by, "similar") ? Math.max(shared, 1) : shared
  }
  const scored = candidates.facts.filter((c) => !exactIds.has(c.id)).map((c) => ({ c, s: score(c) }))
  // a stable sort keeps `facts`' newest-first order within a score
  return scored.sort((a, b) => b.s - a.s).map(({ c }) => c)
}

/**
 * What the model is asked about: the new facts that are not exact repeats, not of an exclusive
 * relation (code decides those: `decided`), and share an entity with some stored candidate other
 * than those repeats (a fact about none of them can neither repeat nor contradict one; when a
 * candidate was found by similarity, whose alias is not known by name, every such fact is; so is
 * a fact whose description found a candidate by its meaning), and those candidates.
 */
const forModel = (candidates: Candidates) => {
  const newFacts = toNewFacts(candidates.resolved)
  const stored = toStoredFacts(candidates.facts, candidates.statedEnds)
  const exact = exactRepeats(newFacts, stored)
  const decided = exclusiveContradictions(
    newFacts.filter((f) => !exact.has(f.index)),
    stored,
    candidates.exclusive ?? new Map()
  )
  // a stored fact with a new fact's triple is settled in code: the same fact told again, or the
  // same fact in another period ("lives in Berlin again"), never a contradiction or a paraphrase
  const tripleOf = (f: NewFact | StoredFact) => JSON.stringify([f.source_key, f.target_key, f.relation])
  const newTriples = new Set(newFacts.map(tripleOf))
  const exactIds = new Set([...exact.values(), ...stored.filter((f) => newTriples.has(tripleOf(f))).map((f) => f.id)])
  const others = candidates.facts.filter((f) => !exactIds.has(f.id))
  const keyById = new Map(candidates.storedEntities.map((e) => [e.id, e.name_key] as const))
  const storedKeys = new Set(others.flatMap((f) => [keyById.get(f.source_id), keyById.get(f.target_id)]))
  const bySimilarity = others.some((f) => foundVia(candidates.foundBy.get(f.id), "similar"))
  const open = newFacts.filter((f) => {
    if (exact.has(f.index) || decided.decided.has(f.index)) return false
    const edge = candidates.resolved[f.index]!.edge
    return bySimilarity || candidates.foundByMeaning.has(f.index) || storedKeys.has(edge.source_key) ||
      storedKeys.has(edge.target_key)
  })
  return { newFacts, exact, exactIds, decided, open: others.length === 0 ? [] : open }
}

/**
 * Exact repeats and exclusive relations in code; the model only when some other new fact can be
 * compared with a stored fact.
 */
export const needsModel = (candidates: Candidates): boolean => forModel(candidates).open.length > 0

/**
 * The plan for the new facts; `ctx` null: the model is not asked (exact repeats and the
 * exclusive relations' contradictions, which code decides, are all there is).
 */
export const resolveFacts = (
  ctx: CallContext | null,
  input: { readonly candidates: Candidates; readonly referenceTime: string; readonly now: string } & ModelChoice
): Effect.Effect<Resolution, LlmFailed | LlmUnavailable> =>
  Effect.gen(function*() {
    const { newFacts, exact, exactIds, decided, open } = forModel(input.candidates)
    let duplicates: ReadonlyArray<{ readonly new: number; readonly existing: number }> = []
    let contradictions: ReadonlyArray<{ readonly new: number; readonly existing: ReadonlyArray<number> }> = []
    let ignored: ReadonlyArray<string> = []
    const promptNewFacts = open.map((f) => {
      const r = input.candidates.resolved[f.index]!
      return {
        index: f.index,
        source: r.edge.source,
        relation: r.edge.relation,
        target: r.edge.target,
        description: r.edge.description,
        valid_at: r.edge.valid_at
      }
    })
    // Shown by relevance until the token budget; a fact not shown cannot be closed or merged.
    const shown = ctx === null || open.length === 0 ? [] : fitExistingFacts({
      referenceTime: input.referenceTime,
      newFacts: promptNewFacts,
      ranked: rankForPrompt(input.candidates, open, exactIds).map((f) => ({
        id: f.id,
        source: f.source_name,
        relation: f.relation,
        target: f.target_name,
        description: f.description,
        valid_at: f.valid_at
      })),
      budget: RESOLVE_EDGES_PROMPT_BUDGET,
      minShown: RESOLVE_EDGES_MIN_SHOWN
    }, countTokens)
    const calledModel = ctx !== null && shown.length > 0
    if (calledModel) {
      const prompt = buildResolveEdgesPrompt({
        referenceTime: input.referenceTime,
        newFacts: promptNewFacts,
        existingFacts: shown
      })
      const response = yield* callLlm(ctx, {
        stage: "resolve_edges",
        model: input.models.resolve_edges,
        reasoning: input.reasoning.resolve_edges ?? "none",
        system: prompt.system,
        messages: [{ role: "user", content: prompt.user }],
        maxTokens: RESOLVE_EDGES_MAX_TOKENS,
        answerSchema: RESOLVE_EDGES_ANSWER
      })
      const parsed = parseResolveEdges(
        response.text,
        new Set(open.map((f) => f.index)),
        new Set(shown.map((s) => s.id))
      )
      if (Either.isLeft(parsed)) {
        return yield* new LlmFailed({
          message: `resolve_edges: unusable answer from the model: ${parsed.left}`,
          stage: "resolve_edges"
        })
      }
      duplicates = parsed.right.duplicates
      contradictions = parsed.right.contradictions
      ignored = parsed.right.ignored
      if (ignored.length > 0) yield* Effect.logWarning("resolve_edges: ignored parts of the answer", { ignored })
    }
    const shownIds = new Set(shown.map((f) => f.id))
    const comparedInCode = new Set(decided.contradictions.flatMap((c) => c.existing))
    const stored = toStoredFacts(
      input.candidates.facts.filter((f) => exactIds.has(f.id) || shownIds.has(f.id) || comparedInCode.has(f.id)),
      input.candidates.statedEnds
    )
    const plan = planReconciliation({
      newFacts,
      stored,
      exact,
      duplicates,
      // the model's, and those of the exclusive relations, which code decided
      contradictions: [...decided.contradictions, ...contradictions],
      now: input.now
    })
    return { plan, calledModel, ignored }
  })

/** Stage resolve_edges: run (and logged) only when the model must be asked; else exact repeats in code. */
export const resolveEdges = Effect.fn("remember.resolve_edges")(
  function*(ctx: RunContext, candidates: Candidates, now: string) {
    const { request } = ctx
    const input = {
      candidates,
      referenceTime: ctx.referenceTime,
      now,
      models: request.models,
      reasoning: request.reasoning
    }
    if (!needsModel(candidates)) return yield* resolveFacts(null, input)
    return yield* ctx.recorder.stage(
      "resolve_edges",
      resolveFacts(callContext(ctx, "resolve_edges"), input),
      (r) => ({ closes: r.plan.closes.length, ignored: r.ignored.length }),
      (r) => ({ observation: { facts: r.plan.facts, closes: r.plan.closes, ignored: r.ignored } })
    )
  }
)
