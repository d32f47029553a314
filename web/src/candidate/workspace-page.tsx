import type { PageProps } from "../lib/page";

export function WorkspacePage(_props: PageProps) {
  return <h1>WorkspacePage</h1>;
}
