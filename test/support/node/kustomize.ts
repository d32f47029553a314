import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

/**
 * A small kustomize, for rendering deploy/kubernetes/ offline in the tests (no kustomize
 * binary is needed): `resources` (files and kustomization directories), `namespace`,
 * `images` and `patches` given by `path` as strategic merge patches, `$patch: delete`
 * included. Anything else in a kustomization.yaml is refused, so a manifest change that needs
 * more of kustomize fails here by name rather than rendering something kustomize would not.
 */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

const KUSTOMIZATION_KEYS = new Set(["apiVersion", "kind", "namespace", "resources", "images", "patches"]);
/** Kinds the namespace transformer leaves alone (cluster-scoped). */
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "ClusterTriggerAuthentication", "CustomResourceDefinition", "PriorityClass", "StorageClass"]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every YAML document of a file, as plain data. */
export function readYamlDocuments(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
    return doc.toJS() as unknown;
  }).filter((d) => d !== null && d !== undefined);
}

function asManifest(doc: unknown, file: string): Manifest {
  if (!isObject(doc) || typeof doc.apiVersion !== "string" || typeof doc.kind !== "string" || !isObject(doc.metadata) || typeof doc.metadata.name !== "string") {
    throw new Error(`${file}: a resource needs apiVersion, kind and metadata.name`);
  }
  return doc as Manifest;
}

export const resourceId = (m: Pick<Manifest, "kind" | "metadata">) => `${m.kind}/${m.metadata.name}`;

/** The resources a kustomization directory renders to, in kustomize's order of its `resources`. */
export function renderKustomization(dir: string): Manifest[] {
  const file = join(dir, "kustomization.yaml");
  const [k] = readYamlDocuments(file);
  if (!isObject(k)) throw new Error(`${file}: not a kustomization`);
  const unknown = Object.keys(k).filter((key) => !KUSTOMIZATION_KEYS.has(key));
  if (unknown.length) throw new Error(`${file}: this renderer does not implement ${unknown.join(", ")} (test/support/node/kustomize.ts)`);

  let out: Manifest[] = [];
  for (const entry of (k.resources ?? []) as string[]) {
    const path = resolve(dir, entry);
    const found = statSync(path).isDirectory() ? renderKustomization(path) : readYamlDocuments(path).map((d) => asManifest(d, path));
    for (const m of found) {
      if (out.some((o) => resourceId(o) === resourceId(m))) throw new Error(`${file}: ${resourceId(m)} is defined twice`);
      out.push(m);
    }
  }

  for (const entry of (k.patches ?? []) as Json[]) {
    const keys = Object.keys(entry);
    if (keys.length !== 1 || typeof entry.path !== "string") throw new Error(`${file}: only patches given by \`path\` are implemented, not ${keys.join(", ")}`);
    for (const doc of readYamlDocuments(resolve(dir, entry.path))) {
      const patch = asManifest(doc, entry.path);
      const index = out.findIndex((m) => m.kind === patch.kind && m.metadata.name === patch.metadata.name);
      if (index < 0) throw new Error(`${file}: patch ${entry.path} targets ${resourceId(patch)}, which is not among the resources`);
      if (patch.$patch === "delete") out = out.filter((_, i) => i !== index);
      else out[index] = strategicMerge(out[index], patch) as Manifest;
    }
  }

  for (const image of (k.images ?? []) as Json[]) {
    const name = image.name as string;
    const replacement = `${(image.newName as string | undefined) ?? name}${image.digest ? `@${image.digest as string}` : image.newTag ? `:${image.newTag as string}` : ""}`;
    for (const container of out.flatMap(podContainers)) {
      const bare = String(container.image).replace(/@.*$/, "").replace(/:[^/:]*$/, "");
      if (bare === name) container.image = replacement;
    }
  }

  if (typeof k.namespace === "string") {
    for (const m of out) if (!CLUSTER_SCOPED.has(m.kind)) m.metadata.namespace = k.namespace;
  }
  return out;
}

/** The containers of a resource's pod template (or a Pod's), to be edited in place. */
export function podContainers(m: Manifest): Json[] {
  const spec = m.kind === "Pod" ? m.spec : ((m.spec as Json | undefined)?.template as Json | undefined)?.spec;
  if (!isObject(spec)) return [];
  return [...((spec.initContainers ?? []) as Json[]), ...((spec.containers ?? []) as Json[])];
}

/**
 * kustomize's strategic merge, as far as these manifests need it: objects merge key by key (a
 * null deletes the key); lists whose items all have a `name` (containers, env, volumes,
 * volumeMounts, ports) merge by name, the others are replaced.
 */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (isObject(target) && isObject(patch)) {
    const out: Json = { ...target };
    for (const [key, value] of Object.entries(patch)) {
      if (key === "$patch") continue;
      if (value === null) delete out[key];
      else out[key] = key in out ? strategicMerge(out[key], value) : value;
    }
    return out;
  }
  const named = (list: unknown[]) => list.every((item) => isObject(item) && typeof item.name === "string");
  if (Array.isArray(target) && Array.isArray(patch) && named(target) && named(patch)) {
    const out = [...(target as Json[])];
    for (const item of patch as Json[]) {
      const at = out.findIndex((o) => o.name === item.name);
      if (at < 0) out.push(item);
      else out[at] = strategicMerge(out[at], item) as Json;
    }
    return out;
  }
  return patch;
}
