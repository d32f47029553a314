// Why an invitation could not be accepted, in words for its invitee, with what to do next.
// The API does not tell the invitee the address the invitation was sent to (whoever holds a
// forwarded link would learn it), so the words name it by what it is and name the signed-in
// address only as the one in use.
import { sentence } from "./words";

export interface FailureWords {
  title: string;
  body: string;
}

// Both refusals are 403s told apart only by their detail; the unverified one's opening words
// are the API's (flows/invitations.flow.ts), pinned by its integration test.
const UNVERIFIED = /^Your e-mail address is not verified/;

export function failureWords(status: number, detail: string, signedIn: string | undefined): FailureWords {
  const message = sentence(detail);
  switch (status) {
    case 410:
      return { title: "This invitation has expired or was withdrawn", body: `${message} Ask the interviewer to resend it (or to invite you again); the new e-mail has a fresh link.` };
    case 409:
      return {
        title: "This invitation has been used already",
        body: `${message} An invitation is accepted once. If you accepted it, the task is under My assessments.`,
      };
    case 403:
      if (UNVERIFIED.test(detail)) return { title: "Your e-mail address is not verified", body: message };
      return {
        title: "This invitation was sent to another e-mail address",
        body:
          `This invitation can only be accepted by signing in with the address it was sent to, ` +
          `and you are signed in ${signedIn ? `as ${signedIn}` : "with another one"}. ` +
          "Sign out, sign in with the address this invitation was sent to, then open the link again.",
      };
    case 404:
      return {
        title: "This invitation link is not valid",
        body: `${message} A link cut short by a mail program does not work either: open the whole link from the latest invitation e-mail.`,
      };
    default:
      return { title: "The invitation could not be accepted", body: message };
  }
}
