import type { PageProps } from "../lib/page";

export function IdeSessionPage(_props: PageProps) {
  return <h1>IdeSessionPage</h1>;
}
