import type { PageProps } from "../lib/page";

export function TaskPage(_props: PageProps) {
  return <h1>TaskPage</h1>;
}
