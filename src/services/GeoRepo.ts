import { Context, type Effect } from "effect"

/** What a place was judged to be by detect_geo (spec/contracts.md section 12). */
export const PLACE_KINDS = ["city", "country", "region", "landmark"] as const
export type PlaceKind = (typeof PLACE_KINDS)[number]

/**
 * A gb_entity_geo row: an entity's place, resolved or not. `resolved` false with no `error`
 * means the resolver found nothing; an `error` means the lookup or its storage failed.
 */
export interface EntityGeoRow {
  readonly entity_id: number
  readonly kind: string
  readonly query: string
  readonly resolved: boolean
  readonly latitude: number | null
  readonly longitude: number | null
  readonly display_name: string | null
  readonly country: string | null
  readonly country_code: string | null
  readonly region: string | null
  readonly provider: string | null
  readonly error: string | null
  readonly created_at: string
}

/** gb_entity_geo, keyed by the entity. Infrastructure errors are defects. */
export class GeoRepo extends Context.Tag("gligabao/GeoRepo")<
  GeoRepo,
  {
    /** the rows of these entities (in no particular order); entities without one are absent */
    readonly findByEntityIds: (entityIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<EntityGeoRow>>
    /** inserts the row, or replaces the entity's row */
    readonly upsert: (row: EntityGeoRow) => Effect.Effect<EntityGeoRow>
  }
>() {}
