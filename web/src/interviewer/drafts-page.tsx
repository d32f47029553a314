import type { PageProps } from "../lib/page";

export function DraftsPage(_props: PageProps) {
  return <h1>DraftsPage</h1>;
}
