import type { PageProps } from "../lib/page";

export function AcceptInvitationPage(_props: PageProps) {
  return <h1>AcceptInvitationPage</h1>;
}
