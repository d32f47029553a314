import type { PageProps } from "../lib/page";

export function DraftPage(_props: PageProps) {
  return <h1>DraftPage</h1>;
}
