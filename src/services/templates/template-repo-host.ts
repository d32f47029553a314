/**
 * The repo host of tasks copied from a template: the bundled catalogue read through the same
 * interface as GitHub, so a copy goes through the import pipeline unchanged (snapshot, split,
 * validation). Template `slug` is one repository whose pull request 1 is the template's
 * change; its base and head commits are the catalogue's tree ids.
 */
import { splitPatch, type PatchFile } from "../../domain/patch-split";
import { TEMPLATE_PULL_NUMBER, TEMPLATE_SOURCE_OWNER, templatePath } from "../../domain/templates";
import { RepoHostError } from "../repohost/repohost-errors";
import type { IssueInfo, PullRequestFileInfo, PullRequestInfo, RepoHost, Tarball } from "../repohost/repo-host";
import { readTarFiles, TarLimitError } from "../repohost/tar";
import { findTemplate, type CatalogueTemplate } from "./catalogue";

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

export class TemplateRepoHost implements RepoHost {
  constructor(private readonly slug: string) {}

  private template(): CatalogueTemplate {
    const template = findTemplate(this.slug);
    if (!template) throw new RepoHostError("not_found", `The template ${this.slug} is no longer in the catalogue; copy another one.`);
    return template;
  }

  private change(number: number): { template: CatalogueTemplate; files: PatchFile[] } {
    const template = this.template();
    if (number !== TEMPLATE_PULL_NUMBER) throw new RepoHostError("not_found", `The template ${this.slug} has no change ${number}.`);
    const split = splitPatch(template.diff);
    // The catalogue's build splits every diff the same way, so this is a broken bundle.
    if (!split.ok) throw new RepoHostError("invalid_response", `The diff of template ${this.slug} does not split: ${split.reason}`);
    return { template, files: split.value.files };
  }

  private base(commit: string): CatalogueTemplate {
    const template = this.template();
    // Only the base is stored as a tree: the head exists as the diff, and no binary file
    // (whose content would have to be read at head) is allowed in a template.
    if (commit !== template.base_commit) throw new RepoHostError("not_found", `Commit ${commit.slice(0, 7)} is not the base of template ${this.slug}.`);
    return template;
  }

  async getPullRequest(number: number): Promise<PullRequestInfo> {
    const { template, files } = this.change(number);
    return {
      number,
      title: template.title,
      body: template.statement.body,
      state: "open",
      htmlUrl: templatePath(this.slug),
      base: { ref: "base", sha: template.base_commit },
      head: { ref: "solution", sha: template.head_commit },
      changedFiles: files.length,
      additions: files.reduce((n, f) => n + f.additions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      commits: 1,
      repository: { fullName: `${TEMPLATE_SOURCE_OWNER}/${this.slug}`, private: false, defaultBranch: "base" },
    };
  }

  async getIssue(number: number): Promise<IssueInfo> {
    throw new RepoHostError("not_found", `Template ${this.slug} has no issue ${number}.`);
  }

  async listPullRequestFiles(number: number): Promise<PullRequestFileInfo[]> {
    return this.change(number).files.map((f) => ({
      filename: f.path,
      ...(f.previousPath === undefined ? {} : { previousFilename: f.previousPath }),
      status: f.status,
      additions: f.additions,
      deletions: f.deletions,
      changes: f.additions + f.deletions,
      sha: null,
    }));
  }

  async getPullRequestDiff(number: number, options: { maxBytes?: number } = {}): Promise<Uint8Array> {
    const diff = new TextEncoder().encode(this.change(number).template.diff);
    if (options.maxBytes !== undefined && diff.byteLength > options.maxBytes) {
      throw new RepoHostError("too_large", `The diff of template ${this.slug} is larger than ${options.maxBytes} bytes.`);
    }
    return diff;
  }

  async downloadTarball(commit: string): Promise<Tarball> {
    const bytes = base64Bytes(this.base(commit).tarball);
    return { stream: streamOf(bytes), size: bytes.byteLength };
  }

  async getFileContents(commit: string, paths: string[], options: { maxBytes?: number } = {}): Promise<Map<string, Uint8Array>> {
    if (paths.length === 0) return new Map();
    const bytes = base64Bytes(this.base(commit).tarball);
    const tar = streamOf(bytes).pipeThrough(new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>);
    const maxFileBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    try {
      return await readTarFiles(tar, new Set(paths), { stripComponents: 1, maxFileBytes, maxStreamBytes: Number.MAX_SAFE_INTEGER });
    } catch (error) {
      if (error instanceof TarLimitError) throw new RepoHostError("too_large", `Reading files of template ${this.slug}: ${error.message}.`);
      throw error;
    }
  }
}
