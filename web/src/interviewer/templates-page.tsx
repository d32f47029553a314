import type { PageProps } from "../lib/page";

export function TemplatesPage(_props: PageProps) {
  return <h1>TemplatesPage</h1>;
}
