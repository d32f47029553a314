// The install of an import's prepare job in words (docs/runner-protocol.md, "Prepare jobs"):
// the steps come from the lockfiles and manifests the repository has, so a repository without
// any has none, and an empty table would only look like a page that failed to load.

export interface InstallLike {
  steps: readonly unknown[];
  failure: string | null;
  node: string;
  python: string | null;
}

/** "Node 20.11.1, Python 3.12": the versions the install ran with. */
export function installVersions(install: InstallLike): string {
  return install.python ? `Node ${install.node}, Python ${install.python}` : `Node ${install.node}`;
}

/** The sentence shown instead of the steps' table; null when there are steps to list. */
export function noInstallStepsText(install: InstallLike): string | null {
  if (install.steps.length > 0) return null;
  // With a failure, that failure (shown below it) says why nothing ran, not the repository.
  return install.failure
    ? `No install steps ran (${installVersions(install)}).`
    : `No install steps ran (${installVersions(install)}): the repository has no lockfile, manifest or requirements that need installing.`;
}
