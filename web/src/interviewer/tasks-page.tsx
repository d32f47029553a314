import type { PageProps } from "../lib/page";

export function TasksPage(_props: PageProps) {
  return <h1>TasksPage</h1>;
}
