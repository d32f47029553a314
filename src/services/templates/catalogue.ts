/**
 * The public templates shipped inside the Worker bundle (docs/api.md, "Public templates").
 * `catalogue.json` is generated from `templates/<slug>/` by `npm run templates:build`; a unit
 * test rebuilds it and fails when the sources and the bundle differ. Being part of the bundle,
 * the catalogue needs no seeding: a fresh database lists it.
 */
import generated from "./catalogue.json";

export interface CatalogueTemplate {
  slug: string;
  /** The catalogue's name for the template; the staff's title of a task copied from it. */
  title: string;
  /** What candidates read (markdown body). */
  statement: { title: string; body: string };
  language: string;
  test_framework: string;
  tags: string[];
  time_limit_minutes: number;
  /** The test ids validation must find, as src/domain/test-outcomes.ts `testId` writes them. Never public. */
  fail_to_pass: string[];
  pass_to_pass: string[];
  /** git tree ids of the base and of base + change: content hashes, stable across builds. */
  base_commit: string;
  head_commit: string;
  /** Base64 of the gzip tarball of the base, with one top-level folder as GitHub's tarballs have. */
  tarball: string;
  /** The unified diff base → head (`git diff-tree -p --full-index -M`): the solution and the hidden tests. */
  diff: string;
}

export interface Catalogue {
  about: string;
  templates: CatalogueTemplate[];
}

const catalogue: Catalogue = generated;

/** Every template, ordered by slug. */
export const TEMPLATES: readonly CatalogueTemplate[] = catalogue.templates;

export function findTemplate(slug: string): CatalogueTemplate | undefined {
  return TEMPLATES.find((t) => t.slug === slug);
}
